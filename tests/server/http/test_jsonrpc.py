"""`jsonrpc.read`: what an HTTP body must be before the SDK reads it, and how each refusal reads."""

import json

import pytest

from lancelot_server.http.jsonrpc import INVALID_REQUEST, PARSE_ERROR, BadMessage, error_body, read
from lancelot_server.stdio import scrub_line

SEARCH = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "lancedb_search"}}


def refusal(body):
    with pytest.raises(BadMessage) as caught:
        read(body)
    return caught.value.code, caught.value.message, caught.value.id


def test_a_message_passes_as_it_was_sent_with_its_method_and_tool_for_the_log():
    body = json.dumps(SEARCH).encode()
    message = read(body)
    assert message.body is body
    assert (message.rpc_method, message.tool) == ("tools/call", "lancedb_search")


def test_replies_and_notifications_pass():
    assert read(b'{"jsonrpc": "2.0", "id": 1, "result": {}}').rpc_method is None
    assert read(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}').rpc_method == (
        "notifications/initialized"
    )


def test_a_lone_surrogate_escape_becomes_u_fffd_exactly_as_over_stdio():
    text = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {"query": "chain \\ud83d"}}}'
    message = read(text.encode())
    assert json.loads(message.body)["params"]["arguments"]["query"] == "chain \ufffd"
    assert message.body == scrub_line(text).encode()


@pytest.mark.parametrize("body", [b"[]", json.dumps([SEARCH, SEARCH]).encode()])
def test_a_batch_is_a_short_invalid_request(body):
    assert refusal(body) == (
        INVALID_REQUEST,
        "Invalid Request: batches are not supported; send one message per POST",
        None,
    )


@pytest.mark.parametrize("id", [{"a": 1}, [1], True, 1.5, None])
def test_a_request_whose_id_is_no_string_or_integer_is_an_invalid_request_with_id_null(id):
    code, message, answered_id = refusal(json.dumps({**SEARCH, "id": id}).encode())
    assert (code, answered_id) == (INVALID_REQUEST, None)
    assert message == 'Invalid Request: "id" must be a string or an integer'


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"42", (INVALID_REQUEST, "Invalid Request: the body is not a JSON-RPC message object", None)),
        (b'{"id": 7, "method": "ping"}', (INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', 7)),
        (
            b'{"jsonrpc": "2.0", "id": "a", "method": 5}',
            (INVALID_REQUEST, 'Invalid Request: "method" must be a string', "a"),
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1}',
            (INVALID_REQUEST, 'Invalid Request: a message needs "method", "result" or "error"', 1),
        ),
    ],
)
def test_other_shapes_are_invalid_requests_naming_the_fault_and_echoing_a_usable_id(body, expected):
    assert refusal(body) == expected


@pytest.mark.parametrize("body", [b"not json", b"", b"\xff\xfe", '{"jsonrpc": "2.0"}'.encode("utf-16"), b"[" * 100_000])
def test_a_body_that_is_not_utf8_json_is_a_parse_error(body):
    assert refusal(body) == (PARSE_ERROR, "Parse error: the body is not JSON", None)


def test_an_error_body_is_one_short_json_rpc_error():
    assert json.loads(error_body(INVALID_REQUEST, "No.", 4)) == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32600, "message": "No."},
    }
