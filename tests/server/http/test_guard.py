"""The guard's rules at the ASGI level, including what a real HTTP server cannot send it (a lying body)."""

import json
import time

import anyio
import pytest

from lancelot_schema.settings import resolve
from lancelot_server.http.guard import MAX_BODY, Guard, Rules, is_loopback, loopback_hosts
from lancelot_server.http.serve import http_rules

VERSIONS = frozenset({"2025-03-26", "2025-11-25", "2026-07-28"})
RULES = Rules(
    path="/mcp",
    allowed_hosts=loopback_hosts(3000),
    allowed_origins=frozenset({"https://app.example"}),
    protocol_versions=VERSIONS,
)
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lancedb_search"}}).encode()


class Recorder:
    """The app behind the guard: records what reached it and answers 200."""

    def __init__(self):
        self.bodies = []

    async def __call__(self, scope, receive, send):
        message = await receive()
        self.bodies.append(message["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


class Body:
    """A client body delivered in chunks; counts how many the guard pulled."""

    def __init__(self, chunks):
        self.chunks = list(chunks)
        self.pulled = 0

    async def __call__(self):
        if self.pulled >= len(self.chunks):
            return {"type": "http.disconnect"}
        chunk = self.chunks[self.pulled]
        self.pulled += 1
        return {"type": "http.request", "body": chunk, "more_body": self.pulled < len(self.chunks)}


def call(headers=None, method="POST", path="/mcp", body=None, rules=RULES):
    headers = {
        "host": "127.0.0.1:3000",
        "content-type": "application/json",
        "accept": "application/json",
        **(headers or {}),
    }
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }
    app = Recorder()
    receive = body if isinstance(body, Body) else Body([INIT if body is None else body])
    sent = []

    async def send(message):
        sent.append(message)

    anyio.run(Guard(app, rules), scope, receive, send)
    start = sent[0]
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:]), app, receive


def test_a_good_request_reaches_the_app_with_its_body():
    status, _, _, app, _ = call()
    assert status == 200
    assert app.bodies == [INIT]


@pytest.mark.parametrize("path", ["/", "/mcp/extra", "/other"])
def test_another_path_is_404(path):
    status, _, _, app, _ = call(path=path)
    assert status == 404
    assert app.bodies == []


def test_a_trailing_slash_is_the_same_endpoint():
    assert call(path="/mcp/")[0] == 200


@pytest.mark.parametrize("host", ["evil.example.com", "127.0.0.1:3001", "localhost"])
def test_a_host_not_listed_is_403(host):
    status, _, body, app, _ = call({"host": host})
    assert status == 403
    assert "Host" in json.loads(body)["error"]["message"]
    assert app.bodies == []


@pytest.mark.parametrize("host", ["127.0.0.1:3000", "localhost:3000", "[::1]:3000", "LOCALHOST:3000"])
def test_loopback_hosts_with_the_port_pass(host):
    assert call({"host": host})[0] == 200


def test_an_origin_not_listed_is_403_and_a_listed_one_passes():
    assert call({"origin": "http://evil.example.com"})[0] == 403
    assert call({"origin": "https://app.example"})[0] == 200


class TrickledBody(Body):
    """A client that sends a chunk, then waits longer than the guard will."""

    async def __call__(self):
        if self.pulled:
            await anyio.sleep(5)
        return await super().__call__()


@pytest.mark.xdist_group("timing")  # a time budget
def test_a_body_that_does_not_arrive_in_time_is_408_and_never_reaches_the_app():
    rules = Rules(RULES.path, RULES.allowed_hosts, RULES.allowed_origins, VERSIONS, body_timeout=0.2)
    started = time.monotonic()
    status, _, body, app, _ = call(body=TrickledBody([INIT[:10], INIT[10:]]), rules=rules)
    assert status == 408 and b"did not arrive within 0.2 s" in body
    assert app.bodies == []
    assert time.monotonic() - started < 3


APP = "https://app.example"


def test_a_preflight_from_an_allowed_origin_is_204_with_cors_headers_and_never_reaches_the_app():
    asked = "content-type, mcp-protocol-version"
    status, headers, body, app, _ = call(
        {"origin": APP, "access-control-request-method": "POST", "access-control-request-headers": asked},
        method="OPTIONS",
        body=b"",
    )
    assert status == 204 and body == b""
    assert headers[b"access-control-allow-origin"] == APP.encode()
    assert headers[b"access-control-allow-methods"] == b"POST"
    assert headers[b"access-control-allow-headers"] == asked.encode()
    assert headers[b"vary"] == b"Origin"
    assert app.bodies == []


def test_a_preflight_without_requested_headers_allows_the_ones_mcp_clients_send():
    _, headers, _, _, _ = call({"origin": APP}, method="OPTIONS", body=b"")
    allowed = headers[b"access-control-allow-headers"].decode().split(", ")
    assert {"content-type", "accept", "mcp-protocol-version"} <= set(allowed)


def test_a_preflight_from_an_unlisted_origin_is_403_and_options_without_origin_is_405():
    status, headers, _, _, _ = call({"origin": "https://evil.example"}, method="OPTIONS", body=b"")
    assert status == 403 and b"access-control-allow-origin" not in headers
    status, headers, _, _, _ = call(method="OPTIONS", body=b"")
    assert status == 405 and headers[b"allow"] == b"POST"


def test_answers_to_an_allowed_origin_carry_cors_headers_refusals_included():
    status, headers, _, _, _ = call({"origin": APP})
    assert status == 200
    assert headers[b"access-control-allow-origin"] == APP.encode()
    assert b"mcp-protocol-version" in headers[b"access-control-expose-headers"]
    status, headers, _, _, _ = call({"origin": APP}, body=b"x" * (MAX_BODY + 1))
    assert status == 413 and headers[b"access-control-allow-origin"] == APP.encode()


def test_answers_without_an_origin_carry_no_cors_headers():
    _, headers, _, _, _ = call()
    assert not any(name.startswith(b"access-control-") for name in headers)


def test_with_no_origins_configured_every_origin_is_refused():
    rules = Rules("/mcp", None, frozenset(), VERSIONS)
    assert call({"origin": "http://127.0.0.1:3000"}, rules=rules)[0] == 403
    assert call(rules=rules)[0] == 200


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "OPTIONS"])
def test_methods_other_than_post_are_405_with_allow(method):
    status, headers, _, app, _ = call(method=method)
    assert status == 405
    assert headers[b"allow"] == b"POST"
    assert app.bodies == []


def test_an_unsupported_protocol_version_is_400_naming_the_supported_ones():
    status, _, body, _, _ = call({"mcp-protocol-version": "1999-01-01"})
    assert status == 400
    error = json.loads(body)["error"]
    assert error["data"] == {"supported": sorted(VERSIONS), "requested": "1999-01-01"}


def test_supported_protocol_versions_pass():
    for version in VERSIONS:
        assert call({"mcp-protocol-version": version})[0] == 200


def test_a_declared_length_over_the_limit_is_413_before_any_byte_is_read():
    body = Body([b"x" * 10])
    status, _, _, app, receive = call({"content-length": str(MAX_BODY + 1)}, body=body)
    assert status == 413
    assert receive.pulled == 0
    assert app.bodies == []


def test_a_body_over_the_limit_without_a_length_is_413_once_the_limit_is_passed():
    body = Body([b"x" * 8192] * 100)
    status, _, _, app, receive = call(body=body)
    assert status == 413
    assert receive.pulled == MAX_BODY // 8192 + 1  # stops at the first chunk past the limit
    assert app.bodies == []


def test_a_length_that_lies_does_not_let_more_than_the_limit_in():
    body = Body([b"x" * 8192] * 100)
    status, _, _, _, receive = call({"content-length": "100"}, body=body)
    assert status == 413
    assert receive.pulled == MAX_BODY // 8192 + 1


def test_a_body_of_exactly_the_limit_is_read():
    padded = INIT[:-1] + b" " * (MAX_BODY - len(INIT)) + b"}"
    assert len(padded) == MAX_BODY
    status, _, _, app, _ = call(body=Body([padded[:40000], padded[40000:]]))
    assert status == 200
    assert app.bodies == [padded]


@pytest.mark.parametrize("length", ["ten", "-1"])
def test_a_malformed_length_is_400(length):
    assert call({"content-length": length})[0] == 400


@pytest.mark.parametrize("body", [b"not json", b"", b"{", b"\xff\xfe"])
def test_a_body_that_is_not_json_is_400_parse_error(body):
    status, _, answer, app, _ = call(body=body)
    assert status == 400
    assert json.loads(answer)["error"]["code"] == -32700
    assert app.bodies == []


def test_content_length_with_transfer_encoding_is_400_closing_the_connection_before_any_other_rule():
    headers = {"content-length": "10", "transfer-encoding": "chunked", "host": "evil"}
    status, sent, body, app, receive = call(headers, path="/elsewhere")
    assert status == 400 and sent[b"connection"] == b"close"
    assert json.loads(body)["error"] == {
        "code": -32600,
        "message": "Bad request: Content-Length and Transfer-Encoding together",
    }
    assert receive.pulled == 0 and app.bodies == []


def test_a_batch_or_a_request_with_an_object_id_is_400_invalid_request_and_never_reaches_the_app():
    for body in [b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', b'{"jsonrpc": "2.0", "id": {}, "method": "ping"}']:
        status, _, answer, app, _ = call(body=body)
        assert status == 400 and app.bodies == []
        assert json.loads(answer)["id"] is None and json.loads(answer)["error"]["code"] == -32600


def test_the_app_receives_a_lone_surrogate_as_u_fffd():
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {"query": "a \\ud83d"}}}'
    status, _, _, app, _ = call(body=body)
    assert status == 200
    assert json.loads(app.bodies[0])["params"]["arguments"]["query"] == "a \ufffd"


def test_rules_are_checked_in_order_path_host_origin_method():
    assert call({"host": "evil"}, path="/x", method="GET")[0] == 404
    assert call({"host": "evil", "origin": "http://evil"}, method="GET")[0] == 403
    assert call({"origin": "http://evil"}, method="GET")[0] == 403


def test_http_rules_default_to_loopback_hosts_on_a_loopback_bind():
    rules = http_rules(resolve({}), "127.0.0.1", 4123)
    assert rules.allowed_hosts == {"127.0.0.1:4123", "localhost:4123", "[::1]:4123"}
    assert rules.allowed_origins == frozenset()
    assert rules.path == "/mcp"
    assert "2026-07-28" in rules.protocol_versions
    assert "2025-03-26" in rules.protocol_versions


def test_http_rules_skip_the_host_check_on_a_public_bind_unless_hosts_are_listed():
    assert http_rules(resolve({}), "0.0.0.0", 3000).allowed_hosts is None
    listed = http_rules(resolve({"LANCELOT_ALLOWED_HOSTS": "Search.Example:443, other"}), "0.0.0.0", 3000)
    assert listed.allowed_hosts == {"search.example:443", "other"}


def test_loopback_addresses():
    assert all(is_loopback(host) for host in ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
    assert not any(is_loopback(host) for host in ["0.0.0.0", "::", "192.0.2.1"])


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", " Application/JSON ;charset=UTF-8"]
)
@pytest.mark.parametrize(
    "accept", ["application/json", "*/*", "application/*;q=0.5", "text/event-stream, application/json"]
)
def test_a_json_body_from_a_client_taking_json_passes(content_type, accept):
    status, _, _, app, _ = call({"content-type": content_type, "accept": accept})
    assert status == 200 and app.bodies == [INIT]


@pytest.mark.parametrize(
    ("headers", "status", "says"),
    [
        ({"content-type": ""}, 415, "Content-Type: application/json"),
        ({"content-type": "text/plain"}, 415, "Content-Type: application/json"),
        ({"content-type": "application/jsonx"}, 415, "Content-Type: application/json"),
        ({"accept": ""}, 406, "Accept: application/json, text/event-stream"),
        ({"accept": "text/event-stream"}, 406, "Accept: application/json, text/event-stream"),
        ({"accept": "text/*"}, 406, "Accept: application/json, text/event-stream"),
    ],
)
def test_a_body_not_json_or_a_client_not_taking_json_is_refused_before_the_body_is_read(headers, status, says):
    got, head, body, app, receive = call(headers)
    assert got == status and head[b"content-type"] == b"application/json"
    assert says in json.loads(body)["error"]["message"]
    assert receive.pulled == 0 and app.bodies == []
