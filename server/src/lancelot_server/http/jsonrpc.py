"""What an HTTP body must be before the MCP SDK reads it: one JSON-RPC message, in UTF-8.

    not UTF-8, or not JSON                       → -32700 Parse error
    an array (a batch), or any other non-object  → -32600 Invalid Request
    `jsonrpc` other than "2.0"                   → -32600
    `method` present but not a string            → -32600
    a request whose `id` is neither a string     → -32600 (the SDK would take it for a notification,
      nor an integer                                        answer 202 and never the request)
    neither `method` nor `result`/`error`        → -32600

The SDK answers most of these itself, but with pydantic's multi-line validation text (echoing the
input) under the wrong code, or not at all. A lone surrogate escape ("\\ud83d", half an emoji as
JavaScript's JSON.stringify writes it) becomes U+FFFD, exactly as over stdio (`stdio.scrub_line`), so
the two transports answer the same request the same way; the SDK's strict parser would refuse it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lancelot_server.stdio import scrub_line

# JSON-RPC 2.0's codes for a body that is not JSON and for one that is no valid message.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class BadMessage(Exception):
    """The body is no JSON-RPC message the server can answer; `id` is the request's, when it has a usable one."""

    def __init__(self, code: int, message: str, id: str | int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id


@dataclass(frozen=True)
class Message:
    """A checked body: what the SDK is handed, and what the request's log line may say of it."""

    body: bytes
    rpc_method: str | None = None
    tool: str | None = None


def read(body: bytes) -> Message:
    """`body` checked as one JSON-RPC message, its lone surrogates made U+FFFD; BadMessage when it is none."""
    try:
        text = body.decode("utf-8")
        scrubbed = scrub_line(text)
        decoded = json.loads(scrubbed)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise BadMessage(PARSE_ERROR, "Parse error: the body is not JSON") from None
    if isinstance(decoded, list):
        raise BadMessage(INVALID_REQUEST, "Invalid Request: batches are not supported; send one message per POST")
    if not isinstance(decoded, dict):
        raise BadMessage(INVALID_REQUEST, "Invalid Request: the body is not a JSON-RPC message object")
    id = _usable_id(decoded)
    if decoded.get("jsonrpc") != "2.0":
        raise BadMessage(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', id)
    method = decoded.get("method")
    if "method" in decoded:
        if not isinstance(method, str):
            raise BadMessage(INVALID_REQUEST, 'Invalid Request: "method" must be a string', id)
        if "id" in decoded and id is None:
            raise BadMessage(INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')
    elif "result" not in decoded and "error" not in decoded:
        raise BadMessage(INVALID_REQUEST, 'Invalid Request: a message needs "method", "result" or "error"', id)
    params = decoded.get("params")
    tool = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
    return Message(
        body=body if scrubbed is text else scrubbed.encode("utf-8"),
        rpc_method=method,
        tool=tool if isinstance(tool, str) else None,
    )


def error_body(code: int, message: str, id: str | int | None = None, data: Any = None) -> bytes:
    """A JSON-RPC error response, the body of every refusal the server makes itself."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": id, "error": error}).encode()


def _usable_id(decoded: dict[str, Any]) -> str | int | None:
    id = decoded.get("id")
    # bool is an int to Python, never to JSON-RPC.
    return id if isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool)) else None
