"""`lancelot --http`: the tools over MCP Streamable HTTP, stateless, each POST answered with one JSON object.

    uvicorn ─ Connection (request deadline, connection cap: `connections.py`)
            → HttpApp ─ lifespan → the SDK endpoint's run()
                      └ http     → Guard (our Origin/Host/path/method/auth/size/JSON/version rules) → SDK endpoint

Secure by default: bound to an address other than loopback, the server refuses to start unless an auth
mode is configured (`bearer.py`) or the operator passes --allow-unauthenticated (a proxy in front checks).

Inside the guard, `InFlight` (`inflight.py`) lets `--max-requests` requests reach the SDK endpoint at
once and answers the next ones 503 with Retry-After; a request counts once its body has arrived.

uvicorn handles SIGTERM and SIGINT: it stops accepting, lets requests in flight finish, then ends the
lifespan. Nothing is written to stdout; one JSON log line per request goes to stderr.
"""

from __future__ import annotations

import asyncio
import signal
import socket

import structlog
import uvicorn
from starlette.types import Receive, Scope, Send

from lancelot_schema.settings import Settings
from lancelot_server import app
from lancelot_server.auth import bearer
from lancelot_server.http import connections
from lancelot_server.http.connections import Limits, Pool
from lancelot_server.http.guard import Guard, Rules, is_loopback, loopback_hosts, split_setting
from lancelot_server.http.inflight import MAX_REQUESTS, InFlight
from lancelot_server.http.opening import Opening, Stops, url_host

ENDPOINT = "/mcp"
# How long a stop waits for requests in flight before it cuts them off.
GRACEFUL_SECONDS = 30

log = structlog.get_logger("lancelot.http")


def http_rules(
    settings: Settings, host: str, port: int, request_timeout: float = connections.REQUEST_TIMEOUT_S
) -> Rules:
    """The guard's rules for a server bound to `host:port`; the body gets `request_timeout` s to arrive."""
    if settings.allowed_hosts is not None:
        hosts: frozenset[str] | None = split_setting(settings.allowed_hosts)
    elif is_loopback(host):
        hosts = loopback_hosts(port) | {f"{url_host(host)}:{port}"}
    else:
        hosts = None
    return Rules(
        path=ENDPOINT,
        allowed_hosts=hosts,
        allowed_origins=split_setting(settings.allowed_origins),
        protocol_versions=frozenset(app.HTTP_PROTOCOL_VERSIONS),
        body_timeout=request_timeout,
    )


class HttpApp:
    """The ASGI application uvicorn runs: the SDK endpoint's lifespan, and every request through the guard."""

    def __init__(
        self,
        server: app.Server,
        rules: Rules,
        authenticator: bearer.Authenticator | None = None,
        max_requests: int = MAX_REQUESTS,
    ) -> None:
        self.endpoint = app.http_endpoint(server)
        self.guard = Guard(InFlight(self.endpoint.handle_request, max_requests), rules, authenticator)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        else:
            await self.guard(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with self.endpoint.run():
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown: uvicorn sends it once requests in flight are done
        await send({"type": "lifespan.shutdown.complete"})


def serve(
    server: app.Server,
    settings: Settings,
    opened: Opening,
    *,
    request_timeout: float = connections.REQUEST_TIMEOUT_S,
    max_connections: int | None = None,
    max_requests: int = MAX_REQUESTS,
) -> None:
    """Serve `server` on the address `opened` holds, at /mcp, until SIGTERM or SIGINT.

    `max_connections` None: the default cap, lowered to half the file-descriptor limit when that is less.
    """
    host, port, authenticator = opened.host, opened.port, opened.authenticator
    fd_limit = connections.raise_fd_limit()
    cap, fits = connections.connection_cap(max_connections, fd_limit)
    if not fits:
        log.warning(
            "max_connections_above_fd_limit",
            max_connections=cap,
            fd_limit=fd_limit,
            reason="connections may use up the file descriptors the database and the listener need",
        )
    pool = Pool(Limits(request_timeout=request_timeout, max_connections=cap))
    rules = http_rules(settings, host, port, request_timeout)
    if rules.allowed_hosts is None:
        log.warning(
            "host_check_off",
            reason=f"bound to non-loopback {host} and LANCELOT_ALLOWED_HOSTS is unset: any Host header is accepted",
        )
    config = uvicorn.Config(
        HttpApp(server, rules, authenticator, max_requests=max_requests),
        host=host,
        port=port,
        http=connections.protocol(pool),
        h11_max_incomplete_event_size=connections.MAX_HEAD,
        ws="none",  # an Upgrade: websocket request is a plain request to the guard, even with a WebSocket library
        lifespan="on",
        log_config=None,  # our logging (stderr) stays in charge; uvicorn must not touch stdout
        access_log=False,  # the guard writes one line per request instead
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )
    log.info(
        "serving",
        url=f"http://{url_host(host)}:{port}{ENDPOINT}",
        request_timeout=request_timeout,
        max_connections=cap,
        max_requests=max_requests,
        fd_limit=fd_limit,
        auth=describe(authenticator),
    )
    # asyncio's own loop (uvicorn would take uvloop when installed): its accept loop's reports are the
    # ones `connections.exception_handler` knows.
    asyncio.run(_serve(uvicorn.Server(config), opened.listener, pool, opened.stops))
    # Stopped: a stop signal arriving now (a supervisor's second SIGTERM) must not kill the exit. Python
    # restores the default action of the handlers it set when it finalizes, but leaves an ignore in place.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.SIG_IGN)
    log.info("stopped")


async def _serve(server: uvicorn.Server, listener: socket.socket, pool: Pool, stops: Stops) -> None:
    # Before anything is accepted: out of file descriptors, asyncio would log a traceback per failed accept.
    asyncio.get_running_loop().set_exception_handler(connections.exception_handler(pool))
    # Asked to stop before uvicorn listened for it: start, then shut down at once.
    server.should_exit = bool(stops.received)
    await server.serve(sockets=[listener])


def describe(authenticator: bearer.Authenticator | None) -> str:
    """What the log line says of the auth mode."""
    if authenticator is None:
        return "none"
    modes = [name for name, on in (("tokens", authenticator.static), ("oauth", authenticator.jwt)) if on is not None]
    return "+".join(modes)
