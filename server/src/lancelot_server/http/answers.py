"""Every refusal of the HTTP transports carries a JSON-RPC error body, even one the MCP SDK makes.

The guard refuses with JSON-RPC bodies of its own (`guard.Refusal`) and checks most of what the SDK would
refuse first. `JsonErrors`, between the guard and the SDK, covers the rest:

    an error status with no JSON body (the SDK's 2026 entry answers    → the same status, a JSON-RPC body
      406 and 405 with none; its Content-Type check in plain text)       saying what to send instead
    an exception before any answer, or no answer at all                → 500, a JSON-RPC body; the
                                                                          traceback goes to the log only

(uvicorn's own plain-text 400, for bytes that are no HTTP/1.1 request, is `connections.py`'s.)
"""

from __future__ import annotations

from http import HTTPStatus

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lancelot_server.http import jsonrpc

INTERNAL_ERROR = -32603
# What a client whose request the SDK refused in plain text should change, by status.
_HINTS: dict[int, str] = {
    HTTPStatus.BAD_REQUEST: "the request is not one the MCP endpoint takes",
    HTTPStatus.METHOD_NOT_ALLOWED: "send JSON-RPC with POST",
    HTTPStatus.NOT_ACCEPTABLE: "send `Accept: application/json, text/event-stream` (a stream needs the second)",
    HTTPStatus.UNSUPPORTED_MEDIA_TYPE: "send the body with `Content-Type: application/json`",
}

log = structlog.get_logger("lancelot.http")


def _is_json(start: Message) -> bool:
    return any(
        name.lower() == b"content-type" and value.split(b";")[0].strip().lower() == b"application/json"
        for name, value in start.get("headers", [])
    )


async def send_json(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """Answer `status` with the JSON `body`; `headers` besides its Content-Type and Content-Length."""
    kept = [(name, value) for name, value in headers if name.lower() not in (b"content-type", b"content-length")]
    kept += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": kept})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class JsonErrors:
    """ASGI middleware: error answers of `app` without a JSON body get one; a failure before any answer is 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False
        held: Message | None = None  # the start of a plain error answer, sent once its body is replaced

        async def watch(message: Message) -> None:
            nonlocal started, held
            if message["type"] == "http.response.start":
                started = True
                if int(message["status"]) >= 400 and not _is_json(message):
                    held = message
                    return
            elif held is not None and message["type"] == "http.response.body":
                if not message.get("more_body", False):
                    await _replace(held, send)
                return
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:
            if started:
                raise
            log.exception("request failed", path=scope.get("path"))
        if not started:
            message = "Internal error: the server could not answer; its log on stderr says why"
            await send_json(send, 500, jsonrpc.error_body(INTERNAL_ERROR, message), [])


async def _replace(start: Message, send: Send) -> None:
    status = int(start["status"])
    try:
        phrase = HTTPStatus(status).phrase.capitalize()  # "Not acceptable", as the guard's refusals say it
    except ValueError:
        phrase = "Error"
    hint = _HINTS.get(status, "the server's log on stderr may say more")
    code = INTERNAL_ERROR if status >= 500 else jsonrpc.INVALID_REQUEST
    await send_json(send, status, jsonrpc.error_body(code, f"{phrase}: {hint}"), list(start.get("headers", [])))
