"""The checks every HTTP request passes before the MCP SDK sees it, in `lancelot --http` and on Lambda.

A small pure ASGI layer, so both transports apply exactly the same rules, in this order:

    Content-Length and Transfer-Encoding → 400, and the connection closed (ambiguous framing: RFC 9112
                                           §6.3 calls it a request-smuggling attempt)
    path ≠ endpoint (or a document)      → 404
    Host not allowed (when checked)      → 403
    Origin present and not allowed       → 403
    OPTIONS from an allowed Origin       → 204, the CORS preflight answer
    GET of a published document          → 200, the JSON (OAuth's Protected Resource Metadata: `bearer.py`)
    method other than POST               → 405, `Allow: POST`
    MCP-Protocol-Version not supported   → 400 (a missing header means 2025-03-26)
    bearer token missing or not valid    → 401 / 403 / 400 with `WWW-Authenticate`, when auth is on (`bearer.py`)
    Content-Type not application/json    → 415
    Accept without application/json     → 406 (the SDK's rule: `*/*` and `application/*` count)
    body over 64 KB                      → 413, without reading more than 64 KB + one chunk
    body not complete within 30 s        → 408 (a client holding connections open with a trickle;
                                           `Rules.body_timeout`, `--request-timeout` over HTTP)
    body not one JSON-RPC message        → 400, a short JSON-RPC error (see `jsonrpc.py`)

We do these ourselves rather than rely on the SDK: it answers a foreign Host with 421, turns its
checks off for non-loopback binds, trusts Content-Length, and refuses some requests in plain text or
with no body at all. What it still refuses so gets a JSON-RPC body from `answers.py`. Every answer to an allowed Origin,
refusals included, carries the CORS headers a browser needs to read it. The guard also writes the one
log line per request (never the query text).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lancelot_server.auth import bearer, callers
from lancelot_server.http import answers, jsonrpc

MAX_BODY = 64 * 1024
BODY_TIMEOUT_S = 30.0
DEFAULT_PROTOCOL_VERSION = "2025-03-26"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

# CORS: what a browser page on an allowed Origin may send and read. Headers it asks to send are echoed
# (the Origin is trusted by then); without that request header, these are the ones MCP clients use.
CORS_REQUEST_HEADERS = "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id"
CORS_EXPOSED_HEADERS = "mcp-protocol-version, mcp-session-id, www-authenticate"
CORS_MAX_AGE = "600"

# JSON-RPC error codes used in our refusals (the SDK's own codes for the same conditions).
INVALID_REQUEST = jsonrpc.INVALID_REQUEST
UNSUPPORTED_PROTOCOL_VERSION = -32022
ACCEPT = "Accept: application/json, text/event-stream"  # what MCP's Streamable HTTP asks clients to send

log = structlog.get_logger("lancelot.http")


@dataclass(frozen=True)
class Rules:
    """What the guard lets through. `allowed_hosts=None` skips the Host check; `path=None` serves any path."""

    path: str | None
    allowed_hosts: frozenset[str] | None
    allowed_origins: frozenset[str]
    protocol_versions: frozenset[str]
    body_timeout: float = BODY_TIMEOUT_S


class Authenticate(Protocol):
    """What the guard asks who a request comes from (`bearer.Authenticator`): a `Principal`, or a `Challenge`."""

    @property
    def documents(self) -> Mapping[str, bytes]: ...

    def __call__(self, scope: Scope) -> Awaitable[callers.Principal]: ...


def loopback_hosts(port: int) -> frozenset[str]:
    """The Host values a loopback bind answers by default."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def _normalise_path(path: str) -> str:
    return path.rstrip("/") or "/"


class Refusal(Exception):
    """A request the guard answers itself with `status` and a JSON-RPC error body."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        data: Any = None,
        id: str | int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.data = data
        self.id = id

    async def send(self, send: Send) -> None:
        body = jsonrpc.error_body(self.code, self.message, self.id, self.data)
        headers = [(name.lower().encode(), value.encode()) for name, value in self.headers.items()]
        await answers.send_json(send, self.status, body, headers)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def check_headers(rules: Rules, scope: Scope, documents: Mapping[str, bytes] | None = None) -> str | None:
    """Path, Host, Origin, method and protocol version: everything decided before the body is read.

    `documents`: paths served by GET besides the endpoint. Returns the request's Origin when it carries an
    allowed one (None without an Origin header).
    """
    if _header(scope, b"content-length") is not None and _header(scope, b"transfer-encoding") is not None:
        raise Refusal(
            400,
            INVALID_REQUEST,
            "Bad request: Content-Length and Transfer-Encoding together",
            headers={"Connection": "close"},
        )
    document = documents is not None and scope["path"] in documents
    if not document and rules.path is not None and _normalise_path(scope["path"]) != _normalise_path(rules.path):
        raise Refusal(404, INVALID_REQUEST, f"Not found: the MCP endpoint is {rules.path}")
    host = _header(scope, b"host")
    if rules.allowed_hosts is not None and (host is None or host.lower() not in rules.allowed_hosts):
        raise Refusal(403, INVALID_REQUEST, "Forbidden: this Host is not allowed (LANCELOT_ALLOWED_HOSTS)")
    origin = _header(scope, b"origin")
    if origin is not None and origin.lower() not in rules.allowed_origins:
        raise Refusal(403, INVALID_REQUEST, "Forbidden: this Origin is not allowed (LANCELOT_ALLOWED_ORIGINS)")
    if scope["method"] == "OPTIONS" and origin is not None:
        return origin  # a browser's CORS preflight: the guard answers it
    if document:
        if scope["method"] not in ("GET", "HEAD"):
            raise Refusal(
                405, INVALID_REQUEST, "Method not allowed: this document is read with GET", headers={"Allow": "GET"}
            )
        return origin
    if scope["method"] != "POST":
        raise Refusal(405, INVALID_REQUEST, "Method not allowed: send JSON-RPC with POST", headers={"Allow": "POST"})
    version = _header(scope, b"mcp-protocol-version")
    if version is not None and version not in rules.protocol_versions:
        supported = sorted(rules.protocol_versions)
        raise Refusal(
            400,
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported MCP-Protocol-Version {version!r}; supported: {', '.join(supported)}",
            data={"supported": supported, "requested": version},
        )
    return origin


def check_media(scope: Scope) -> None:
    """The body must be JSON and the client must take a JSON answer, as the SDK requires."""
    media = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
    if media != "application/json":
        raise Refusal(
            415, INVALID_REQUEST, "Unsupported media type: send the body with `Content-Type: application/json`"
        )
    accepted = {part.split(";")[0].strip().lower() for part in (_header(scope, b"accept") or "").split(",")}
    if not accepted & {"application/json", "application/*", "*/*"}:
        raise Refusal(406, INVALID_REQUEST, f"Not acceptable: send `{ACCEPT}`; the answers are JSON")


def cors_headers(origin: str) -> list[tuple[bytes, bytes]]:
    """What lets a page on `origin` (already allowed) read an answer."""
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", CORS_EXPOSED_HEADERS.encode()),
        (b"vary", b"Origin"),
    ]


async def publish(body: bytes, scope: Scope, send: Send) -> None:
    """200 with a published JSON document (HEAD: its headers alone)."""
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers.append((b"cache-control", b"max-age=3600"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body, "more_body": False})


async def preflight(scope: Scope, send: Send) -> None:
    """204 to a CORS preflight from an allowed Origin: POST, with the headers the page asked for."""
    asked = _header(scope, b"access-control-request-headers")
    headers = [
        (b"access-control-allow-methods", b"POST"),
        (b"access-control-allow-headers", (asked or CORS_REQUEST_HEADERS).encode("latin-1")),
        (b"access-control-max-age", CORS_MAX_AGE.encode()),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _declared_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    if value is None:
        return None
    try:
        length = int(value)
    except ValueError:
        raise Refusal(400, INVALID_REQUEST, "Bad request: Content-Length is not a number") from None
    if length < 0:
        raise Refusal(400, INVALID_REQUEST, "Bad request: Content-Length is negative")
    return length


async def read_body(scope: Scope, receive: Receive, timeout: float = BODY_TIMEOUT_S) -> bytes:
    """Read the body, refusing with 413 as soon as it passes MAX_BODY; a declared length over it is not read.

    Counts what actually arrives, so a Content-Length that lies cannot carry more than MAX_BODY in.
    """
    declared = _declared_length(scope)
    if declared is not None and declared > MAX_BODY:
        raise Refusal(413, INVALID_REQUEST, f"Payload too large: the limit is {MAX_BODY} bytes")
    try:
        with anyio.fail_after(timeout):
            return await _read_chunks(receive)
    except TimeoutError:
        raise Refusal(408, INVALID_REQUEST, f"Request timeout: the body did not arrive within {timeout:g} s") from None


async def _read_chunks(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise Refusal(400, INVALID_REQUEST, "Bad request: the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise Refusal(413, INVALID_REQUEST, f"Payload too large: the limit is {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def read_message(body: bytes) -> jsonrpc.Message:
    try:
        return jsonrpc.read(body)
    except jsonrpc.BadMessage as bad:
        raise Refusal(400, bad.code, bad.message, id=bad.id) from None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the already-read body over once, then defers to the server's."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class Guard:
    """ASGI middleware: apply `rules` (and `auth` when given), then hand the request (body already read) to `app`.

    The caller `auth` finds is in `callers.current` while `app` answers, for the tools to narrow tables by.
    """

    def __init__(self, app: ASGIApp, rules: Rules, auth: Authenticate | None = None) -> None:
        self.app = answers.JsonErrors(app)
        self.rules = rules
        self.auth = auth
        self.documents = auth.documents if auth is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        checked = jsonrpc.Message(b"")  # what the log line says of the body: never arguments, never the query
        origin: str | None = None
        caller: str | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if origin is not None:
                    message = {**message, "headers": [*message.get("headers", []), *cors_headers(origin)]}
            await send(message)

        try:
            origin = check_headers(self.rules, scope, self.documents)
            if origin is not None and scope["method"] == "OPTIONS":
                await preflight(scope, watch)
                return
            if self.documents is not None and scope["path"] in self.documents:
                await publish(self.documents[scope["path"]], scope, watch)
                return
            principal = await self._authenticate(scope)
            caller = principal.label if principal is not None else None
            check_media(scope)
            body = await read_body(scope, receive, self.rules.body_timeout)
            checked = read_message(body)
            token = callers.current.set(principal)
            try:
                await self.app(scope, _replay(checked.body, receive), watch)
            finally:
                callers.current.reset(token)
        except Refusal as refusal:
            await refusal.send(watch)
        finally:
            log.info(
                "request",
                method=scope["method"],
                path=scope["path"],
                status=status,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
                rpc_method=checked.rpc_method,
                tool=checked.tool,
                **({"caller": caller} if caller is not None else {}),
            )

    async def _authenticate(self, scope: Scope) -> callers.Principal | None:
        if self.auth is None:
            return None
        try:
            return await self.auth(scope)
        except bearer.Challenge as challenge:
            headers = {"WWW-Authenticate": challenge.header}
            raise Refusal(challenge.status, INVALID_REQUEST, challenge.message, headers=headers) from None


def split_setting(values: Iterable[str] | None) -> frozenset[str]:
    return frozenset(value.lower() for value in values or ())
