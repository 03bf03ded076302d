"""The connections `lancelot --http` holds: each request must arrive in time, and only so many at once.

uvicorn's h11 protocol bounds neither. A client that opens a connection and never completes its request
headers holds it, and a file descriptor, forever; `limit_concurrency` counts such connections but acts
only on a request whose headers are complete, so it shuts normal clients out instead (docs/decisions.md,
"HTTP and Lambda behind our own guard"). So `Connection` is uvicorn's h11 protocol, handed over through
uvicorn's public `Config(http=...)`, with:

    headers not complete `request_timeout` s after the connection      → 408 and closed (closed
    opened or its previous answer was sent                               silently if no byte came)
    a connection past `max_connections`                                → the one that has awaited its
                                                                         request longest (1 s or more)
                                                                         is closed as above to make room;
                                                                         with none such, 503, Retry-After
    answered before its body was all read (the guard's 408 or 413)     → closed once the answer is out
    bytes that are no HTTP/1.1 request (h11 refuses them)              → 400 with a JSON-RPC body, and
                                                                         closed (uvicorn's is plain text)

Slow clients at the cap so cannot shut out clients that send their request at once. Once the headers
are in, the guard gives the body the same time (408). Troubles that come in thousands (accepts failing
for want of file descriptors, slow clients cut off, the cap reached) are logged through `Condition`s:
a line when they start, one a minute while they last, one when they end.
"""

from __future__ import annotations

import asyncio
import errno
import sys
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, ClassVar, cast

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from lancelot_server.http import jsonrpc
from lancelot_server.http.conditions import Condition

REQUEST_TIMEOUT_S = 30.0
MAX_HEAD = 16 * 1024  # a request line and headers larger than this are refused (h11's default)
MAX_CONNECTIONS = 1000
RETRY_AFTER_S = 1
# At the cap, a connection that has awaited its request this long makes room for a new one: a client
# that means to send a request sends it at once, so it is never the one closed.
EVICTABLE_AFTER_S = 1.0
# A connection closed with an answer stays half-open this long, its input discarded: closing a socket
# with unread input sends a reset, which can destroy the answer before the client reads it.
LINGER_S = 1.0
# What asyncio's accept loop reports, once per failed accept(), when the process is out of descriptors.
ACCEPT_FAILED = "socket.accept() out of system resource"


@dataclass(frozen=True)
class Limits:
    request_timeout: float = REQUEST_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS


@dataclass
class Pool:
    """What one server's connections share: their limits, those awaiting a request (longest-waiting
    first), and the conditions logged without flooding."""

    limits: Limits = field(default_factory=Limits)
    awaiting: dict[Connection, float] = field(default_factory=dict)  # connection → when it began to wait
    accept_failing: Condition = field(default_factory=lambda: Condition("accept_failing", "error"))
    timed_out: Condition = field(default_factory=lambda: Condition("request_timeout"))
    at_cap: Condition = field(default_factory=lambda: Condition("connection_cap_reached"))

    def evictable(self, now: float) -> Connection | None:
        """The connection that has awaited its request longest, if that is EVICTABLE_AFTER_S or more."""
        for connection, since in self.awaiting.items():
            return connection if now - since >= EVICTABLE_AFTER_S else None
        return None


def protocol(pool: Pool) -> type[Connection]:
    """The protocol class for `uvicorn.Config(http=...)`: `Connection` sharing `pool`."""
    return cast(type[Connection], type("Connection", (Connection,), {"pool": pool}))


class Connection(H11Protocol):
    """One client connection: uvicorn's h11 protocol with a request deadline and the connection cap."""

    pool: ClassVar[Pool] = Pool()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline: asyncio.TimerHandle | None = None
        self.begun = False  # a byte of the awaited request has come
        self.ended = False  # answered and closing: what still arrives is discarded

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        pool = self.pool
        pool.accept_failing.passed()
        if len(self.connections) > pool.limits.max_connections:
            pool.at_cap.occurred(max_connections=pool.limits.max_connections)
            oldest = pool.evictable(self.loop.time())
            if oldest is None:
                message = f"Service unavailable: {pool.limits.max_connections} connections are open; retry shortly"
                self._end(answer(HTTPStatus.SERVICE_UNAVAILABLE, message, {"Retry-After": str(RETRY_AFTER_S)}))
                return
            oldest._end(oldest._timeout_answer("the connection was needed for another client"))
        else:
            pool.at_cap.passed()
        self._watch()

    def data_received(self, data: bytes) -> None:
        if self.ended:
            return
        self.begun = self.begun or self.deadline is not None
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.SEND_BODY and not self.ended:
            # The connection can serve no other request, and uvicorn would keep it open for as long as the
            # client trickles on: never awaiting a request, so never made room with at the cap.
            self._end(b"")
            return
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to bytes h11 cannot parse (`msg` says only that), with a JSON-RPC body."""
        message = (
            "Bad request: not a valid HTTP/1.1 request (a malformed request line or header, a framing it "
            f"cannot read, or a head over {MAX_HEAD // 1024} KB)"
        )
        self._end(answer(HTTPStatus.BAD_REQUEST, message))

    def _watch(self) -> None:
        """Run the deadline while the connection awaits a request's headers (h11: the client is IDLE)."""
        awaiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing() and not self.ended
        if awaiting and self.deadline is None:
            self.begun = False
            self.deadline = self.loop.call_later(self.pool.limits.request_timeout, self._too_slow)
            self.pool.awaiting[self] = self.loop.time()
        elif not awaiting:
            self._disarm()

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
        self.pool.awaiting.pop(self, None)

    def _too_slow(self) -> None:
        seconds = self.pool.limits.request_timeout
        self.pool.timed_out.occurred(seconds=seconds)
        self._end(self._timeout_answer(f"it did not arrive within {seconds:g} s"))

    def _timeout_answer(self, why: str) -> bytes | None:
        """408 to a client that began its request; nothing to one that sent no byte (an idle keep-alive)."""
        if not self.begun:
            return None
        return answer(HTTPStatus.REQUEST_TIMEOUT, f"Request timeout: the request was not complete; {why}")

    def _end(self, response: bytes | None) -> None:
        """Close the connection before any request was read, with `response` when there is one."""
        self._disarm()
        self.ended = True
        self.connections.discard(self)  # it no longer counts against the cap
        if response is None or not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write(response)
        self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)


def answer(status: HTTPStatus, message: str, headers: dict[str, str] | None = None) -> bytes:
    """A whole HTTP/1.1 response closing the connection, written before any request was read."""
    body = jsonrpc.error_body(jsonrpc.INVALID_REQUEST, message)
    lines = [
        f"HTTP/1.1 {status.value} {status.phrase}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in (headers or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def raise_fd_limit() -> int | None:
    """Lift the soft limit on open files to the hard one; the limit now in force (None: no such limit here)."""
    if sys.platform == "win32":
        return None
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # An unlimited hard limit cannot be the soft one (macOS refuses it); 10240 is macOS's usual maximum.
    target = hard if hard != resource.RLIM_INFINITY else 10240
    if soft == resource.RLIM_INFINITY or soft >= target:
        return None if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        return soft
    return target


def connection_cap(asked: int | None, fd_limit: int | None) -> tuple[int, bool]:
    """The cap on open connections, and whether it leaves the other half of the descriptors free.

    By default at most half the descriptors go to connections; the rest are the database's files, the
    listener and the embedding endpoint's connections. A cap asked for is kept even above that.
    """
    room = fd_limit // 2 if fd_limit is not None else None
    if asked is None:
        return (MAX_CONNECTIONS if room is None else min(MAX_CONNECTIONS, room)), True
    return asked, room is None or asked <= room


def exception_handler(pool: Pool) -> Any:
    """An event-loop exception handler that turns failed accepts into `pool.accept_failing`."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if context.get("message") == ACCEPT_FAILED and isinstance(exc, OSError):
            pool.accept_failing.occurred(error=errno.errorcode.get(exc.errno or 0, str(exc.errno)))
            return
        loop.default_exception_handler(context)

    return handle
