"""AWS Lambda entry point: API Gateway HTTP API events (payload format 2.0) in, MCP answers out.

    event ─→ ASGI scope + body chunks ─→ Guard (same rules as HTTP) ─→ SDK endpoint ─→ response dict

Import (Lambda's init phase) loads the MCP SDK but not Lance or openai, which load at first use; a
container that Lambda initializes ahead of any request (provisioned concurrency, SnapStart) imports Lance
then too. Per container, on the first invocation: settings, logging, the MCP server with its store (each
table opened at its first use) and one event loop. Per invocation: only the SDK's stateless endpoint,
which must be fresh each time (its session manager runs once; python-sdk #3121). No Mangum: we drive
the ASGI app ourselves. Nothing is written outside /tmp.

An event is answered as `lancelot --http` answers the same bytes, whatever API Gateway relays: a header
outside Latin-1 goes to the guard as UTF-8, and a body flagged base64 that is not is a 400 with a JSON-RPC
body once the guard reads it, so every check before the body (auth included) comes first.

Authentication follows the HTTP server's rules (`bearer.py`, in the same guard). A function URL or API
Gateway is never loopback, so a container with no auth configured refuses every invocation unless
LANCELOT_ALLOW_UNAUTHENTICATED says that something in front (an API Gateway JWT authorizer) checks callers.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from starlette.types import Message

from lancelot_schema import logs
from lancelot_schema import settings as settings_module
from lancelot_schema.settings import Settings
from lancelot_server import app
from lancelot_server.auth import bearer
from lancelot_server.http.guard import Guard, Refusal, Rules, split_setting
from lancelot_server.http.jsonrpc import PARSE_ERROR

# Decoded bytes handed to the guard per receive(): it stops pulling once a body passes its limit.
CHUNK = 16 * 1024
_TEXT_TYPES = ("application/json", "text/")
NOT_BASE64 = "Parse error: the body is flagged isBase64Encoded but is not base64"

Event = Mapping[str, Any]

log = structlog.get_logger("lancelot.lambda")


@dataclass
class Container:
    """What a warm Lambda container keeps between invocations."""

    server: app.Server  # holds the store, and so the database connection
    rules: Rules
    loop: asyncio.AbstractEventLoop
    authenticator: bearer.Authenticator | None = None


class UnsafeConfiguration(RuntimeError):
    """Settings this function must not serve with; the invocation fails and the message is in its log."""


_container: Container | None = None

# Lambda's init phase runs ahead of any request for these: Lance's import (the first search's largest part,
# docs/decisions.md "Cold start") is then paid before anyone waits. An on-demand container gets its first
# event as soon as its init ends, so there it stays with the first search, where a test keeps it.
AHEAD_OF_REQUESTS = ("provisioned-concurrency", "snap-start")
if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") in AHEAD_OF_REQUESTS:
    import lance  # noqa: F401


def lambda_rules(settings: Settings, protocol_versions: tuple[str, ...]) -> Rules:
    """Lambda has no bind address: the Host is checked only when LANCELOT_ALLOWED_HOSTS lists some."""
    return Rules(
        path=settings.base_path,
        allowed_hosts=split_setting(settings.allowed_hosts) if settings.allowed_hosts is not None else None,
        allowed_origins=split_setting(settings.allowed_origins),
        protocol_versions=frozenset(protocol_versions),
    )


def container() -> Container:
    """The warm container's state, made on the first invocation."""
    global _container
    if _container is None:
        logs.configure("INFO", json=True)
        settings = settings_module.load(os.environ)
        for problem in settings.warnings:
            log.warning(problem)
        authenticator = authentication(settings)
        _container = Container(
            server=app.build_server(settings),
            rules=lambda_rules(settings, app.HTTP_PROTOCOL_VERSIONS),
            loop=asyncio.new_event_loop(),
            authenticator=authenticator,
        )
    return _container


def authentication(settings: Settings) -> bearer.Authenticator | None:
    """The configured authenticator, None when explicitly allowed; `UnsafeConfiguration` otherwise."""
    try:
        authenticator = bearer.from_settings(settings)
    except bearer.AuthConfigError as exc:
        log.error("auth_misconfigured", reason=str(exc))
        raise UnsafeConfiguration(f"Cannot serve: {exc}.") from None
    if authenticator is None and not settings.auth.allow_unauthenticated:
        reason = (
            "no authentication is configured: set LANCELOT_AUTH_TOKENS or LANCELOT_AUTH_TOKENS_FILE, or "
            "LANCELOT_OAUTH_ISSUER and LANCELOT_OAUTH_RESOURCE; or, when an API Gateway authorizer checks "
            "callers, LANCELOT_ALLOW_UNAUTHENTICATED=1"
        )
        log.error("auth_missing", reason=reason)
        raise UnsafeConfiguration(f"Refusing to serve: {reason}.")
    return authenticator


def handler(event: Event, context: object = None) -> dict[str, Any]:
    """The function's handler: `lancelot_server.lambda_handler.handler`."""
    warm = container()
    return warm.loop.run_until_complete(invoke(warm, event))


async def invoke(warm: Container, event: Event) -> dict[str, Any]:
    """Answer one event through the guard and a fresh SDK endpoint."""
    endpoint = app.http_endpoint(warm.server)
    response = _Response()
    async with endpoint.run():
        await Guard(endpoint.handle_request, warm.rules, warm.authenticator)(
            scope(event), _receiver(event), response.send
        )
    return response.result()


def scope(event: Event) -> dict[str, Any]:
    """The ASGI HTTP scope for a payload-2.0 event."""
    http = event.get("requestContext", {}).get("http", {})
    headers = {name.lower(): value for name, value in (event.get("headers") or {}).items()}
    cookies = event.get("cookies") or []
    if cookies:
        headers["cookie"] = "; ".join(cookies)
    host = headers.get("host", "")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": str(http.get("method", "GET")).upper(),
        "scheme": headers.get("x-forwarded-proto", "https"),
        "path": event.get("rawPath") or "/",
        "raw_path": _wire(event.get("rawPath") or "/"),
        "root_path": "",
        "query_string": _wire(event.get("rawQueryString") or ""),
        "headers": [(_wire(name), _wire(str(value))) for name, value in headers.items()],
        "client": (http.get("sourceIp", ""), 0),
        "server": (host.split(":")[0], 443),
    }


def _wire(text: str) -> bytes:
    """The bytes a header, path or query came as: Latin-1 when it fits (what the guard decodes), else UTF-8,
    which is what a client sends for the rest and the HTTP server then sees. Lone surrogates pass as bytes
    that are no UTF-8, as they would over HTTP, rather than raise before any check."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _body_chunks(event: Event) -> Iterator[bytes]:
    """The body, decoded a slice at a time so an oversized one is never decoded whole. A body flagged base64
    that is not is refused when the guard reads it: after the checks that come before the body."""
    body = event.get("body") or ""
    if not event.get("isBase64Encoded"):
        raw = body.encode("utf-8", "surrogatepass")  # a lone surrogate: no UTF-8, a parse error as over HTTP
        for start in range(0, len(raw), CHUNK):
            yield raw[start : start + CHUNK]
        return
    step = CHUNK // 3 * 4  # whole base64 quanta
    for start in range(0, len(body), step):
        try:
            yield base64.b64decode(body[start : start + step], validate=True)
        except ValueError:  # binascii.Error, or a character outside ASCII
            raise Refusal(400, PARSE_ERROR, NOT_BASE64) from None


def _receiver(event: Event) -> Callable[[], Any]:
    """The ASGI receive of the event's body. Each chunk is decoded when asked for, one ahead to know
    whether more follows."""
    chunks = _body_chunks(event)
    pending: bytes | None = None
    done = False

    async def receive() -> Message:
        nonlocal pending, done
        if done:
            return {"type": "http.disconnect"}
        chunk = next(chunks, b"") if pending is None else pending
        following = next(chunks, None)
        if following is None:
            done = True
        else:
            pending = following
        return {"type": "http.request", "body": chunk, "more_body": not done}

    return receive


class _Response:
    """Collects what the ASGI app sends and turns it into the payload-2.0 response."""

    def __init__(self) -> None:
        self.status = 500
        self.headers: dict[str, str] = {}
        self.cookies: list[str] = []
        self.body = bytearray()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            for raw_name, raw_value in message.get("headers", []):
                name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
                if name == "set-cookie":
                    self.cookies.append(value)
                elif name in self.headers:
                    self.headers[name] = f"{self.headers[name]}, {value}"
                else:
                    self.headers[name] = value
        elif message["type"] == "http.response.body":
            self.body.extend(message.get("body", b""))

    def result(self) -> dict[str, Any]:
        as_text = self.headers.get("content-type", "").startswith(_TEXT_TYPES) or not self.body
        result: dict[str, Any] = {
            "statusCode": self.status,
            "headers": self.headers,
            "body": bytes(self.body).decode("utf-8") if as_text else base64.b64encode(self.body).decode("ascii"),
            "isBase64Encoded": not as_text,
        }
        if self.cookies:
            result["cookies"] = self.cookies
        return result
