"""`JsonErrors`: what the SDK answers without a JSON body, or fails to answer, gets a JSON-RPC body."""

import json

import anyio
import pytest
from structlog.testing import capture_logs

from lancelot_server.http.answers import JsonErrors

SCOPE = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}


def answered(app):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    anyio.run(JsonErrors(app), SCOPE, receive, send)
    headers = dict(sent[0]["headers"]) if sent else {}
    return sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


def responding(status, headers, *bodies):
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": status, "headers": headers})
        for n, body in enumerate(bodies, 1):
            await send({"type": "http.response.body", "body": body, "more_body": n < len(bodies)})

    return app


@pytest.mark.parametrize(
    ("status", "headers", "bodies", "says"),
    [
        (406, [], [b""], "Not acceptable: send `Accept: application/json, text/event-stream`"),
        (405, [(b"allow", b"POST")], [b""], "Method not allowed: send JSON-RPC with POST"),
        (400, [(b"content-type", b"text/plain; charset=utf-8")], [b"Invalid Content-Type ", b"header"], "Bad request"),
        (421, [(b"content-type", b"text/plain")], [b"Invalid Host header"], "Misdirected request"),
        (599, [], [b"?"], "Error: the server's log on stderr may say more"),
    ],
)
def test_an_error_without_a_json_body_gets_one_keeping_its_status_and_headers(status, headers, bodies, says):
    got, head, body = answered(responding(status, headers, *bodies))
    assert got == status
    assert head[b"content-type"] == b"application/json" and int(head[b"content-length"]) == len(body)
    assert all(head[name] == value for name, value in headers if name != b"content-type")
    error = json.loads(body)["error"]
    assert error["code"] == (-32603 if status >= 500 else -32600)
    assert error["message"].startswith(says)


@pytest.mark.parametrize(
    ("status", "headers"),
    [(200, [(b"content-type", b"text/event-stream")]), (202, []), (400, [(b"content-type", b"application/json")])],
)
def test_answers_that_succeed_or_are_json_pass_unchanged(status, headers):
    assert answered(responding(status, headers, b"kept")) == (status, dict(headers), b"kept")


def test_an_app_that_fails_before_answering_is_a_500_with_a_json_body_and_a_logged_traceback():
    async def failing(scope, receive, send):
        raise RuntimeError("boom")

    with capture_logs() as logs:
        status, _, body = answered(failing)
    assert status == 500
    assert json.loads(body)["error"] == {
        "code": -32603,
        "message": "Internal error: the server could not answer; its log on stderr says why",
    }
    assert logs[0]["event"] == "request failed" and logs[0]["exc_info"] is True


def test_an_app_that_returns_without_answering_is_a_500_with_a_json_body():
    async def silent(scope, receive, send):
        return None

    status, _, body = answered(silent)
    assert (status, json.loads(body)["error"]["code"]) == (500, -32603)


def test_an_app_that_fails_mid_answer_is_not_answered_twice():
    async def broken(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        answered(broken)
