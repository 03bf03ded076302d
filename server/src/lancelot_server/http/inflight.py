"""How many requests `lancelot --http` answers at once: past the limit, 503 at once rather than a queue.

    uvicorn ─ Connection (headers in time, connection cap) → Guard (body in time, checks) → InFlight → SDK

A pure ASGI layer inside the guard, so only a request whose body has fully arrived, and passed the
guard's checks, counts. A client that trickles its headers or body waits in `connections.py` or in the
guard, bounded by the request timeout, and never holds a slot: slow clients cannot shut out the
requests that arrive whole. The slot is freed when the endpoint returns, however it ends (answered,
failed, the client gone, the server stopping). Refusals are logged through a `Condition`: a line when
the limit is first reached, one a minute while it holds, one when it has passed.

Over HTTP only: a Lambda container answers one request at a time.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from lancelot_server.http.conditions import Condition
from lancelot_server.http.connections import RETRY_AFTER_S
from lancelot_server.http.guard import Refusal

# 64: twice the 32 concurrent clients of the bench target, so that load is never refused. Tool bodies
# run on anyio's worker threads (40 by default); the calls accepted past 40 wait in its queue, at most
# 24 of them and each for about one call: a short wait with a known bound, where without a limit the
# queue grows with the clients. Not tied to 40: requests without a tool call (initialize, tools/list,
# ping, notifications) take no thread, and those threads mostly wait on LanceDB's own threads and on
# the embedding endpoint, so it is not a measure of what the machine can run.
MAX_REQUESTS = 64
# JSON-RPC's Internal error: the code the MCP SDK gives its own 503 (too many sessions).
BUSY = -32603


class InFlight:
    """ASGI middleware: at most `limit` requests inside `app` at once; past that, 503 with `Retry-After`."""

    def __init__(self, app: ASGIApp, limit: int = MAX_REQUESTS) -> None:
        self.app = app
        self.limit = limit
        self.count = 0
        self.full = Condition("max_requests_reached")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # No await between the check and the count: one event loop, so no lock is needed.
        if self.count >= self.limit:
            self.full.occurred(max_requests=self.limit)
            message = f"Service unavailable: {self.limit} requests are in flight; retry in {RETRY_AFTER_S} s"
            await Refusal(503, BUSY, message, headers={"Retry-After": str(RETRY_AFTER_S)}).send(send)
            return
        self.count += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.count -= 1
            self.full.passed()
