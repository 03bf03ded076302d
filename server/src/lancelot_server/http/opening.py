"""What `lancelot --http` checks and takes before it serves: the auth settings, the address, the stop signals.

All of it before the server imports the MCP SDK, most of a start's CPU (docs/decisions.md, "The suite's CPU,
seventh pass"): a setting that cannot work or a taken port is refused at once, and a stop signal that comes
while the rest loads is a clean stop. No SDK, uvicorn or Lance here (an import contract holds it).
"""

from __future__ import annotations

import errno
import signal
import socket
from dataclasses import dataclass
from types import FrameType

import click
import structlog

from lancelot_schema import logs
from lancelot_schema.settings import Settings
from lancelot_server.auth import bearer
from lancelot_server.http.guard import is_loopback

DEFAULT_HOST = "127.0.0.1"

log = structlog.get_logger("lancelot.http")


@dataclass(frozen=True)
class Opening:
    """A server's address, bound; its callers' check; the stop signals kept until uvicorn takes them."""

    host: str
    port: int
    listener: socket.socket
    authenticator: bearer.Authenticator | None
    stops: Stops


def open_port(
    settings: Settings,
    host: str,
    port: int,
    *,
    allow_unauthenticated: bool = False,
    log_level: str = "INFO",
) -> Opening:
    """JSON log lines from here on, the stop signals kept, the auth settings checked, `host:port` bound; a
    ClickException for a setting that cannot work or an address that cannot be had."""
    logs.configure(log_level, json=True)
    # From here on a stop signal is a clean stop (exit 0), whenever it comes: before uvicorn takes the
    # signals it is kept and served as soon as uvicorn starts; uvicorn re-raises it once its graceful
    # shutdown is done, when it must not kill the process either.
    stops = Stops()
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, stops.keep)
    authenticator = authentication(settings, host, allow_unauthenticated)
    # Bound first: a taken port or unknown host is one clear error, with no log line claiming to serve.
    return Opening(host, port, listen(host, port), authenticator, stops)


def authentication(settings: Settings, host: str, allow_unauthenticated: bool) -> bearer.Authenticator | None:
    """The configured authenticator; a ClickException for settings that cannot work, or for a network
    bind with no auth that the operator did not explicitly allow."""
    try:
        authenticator = bearer.from_settings(settings)
    except bearer.AuthConfigError as exc:
        raise click.ClickException(f"Cannot start: {exc}.") from None
    allowed = allow_unauthenticated or settings.auth.allow_unauthenticated
    if authenticator is None and not is_loopback(host) and not allowed:
        raise click.ClickException(
            f"Refusing to serve {url_host(host)} without authentication: anyone who can reach it could read every "
            "served table. Set LANCELOT_AUTH_TOKENS or LANCELOT_AUTH_TOKENS_FILE (bearer tokens), or "
            "LANCELOT_OAUTH_ISSUER and LANCELOT_OAUTH_RESOURCE (OAuth); or, when a proxy in front authenticates, "
            "pass --allow-unauthenticated (LANCELOT_ALLOW_UNAUTHENTICATED=1)."
        )
    if authenticator is None and not is_loopback(host):
        log.warning("auth_off", reason=f"bound to non-loopback {host} with --allow-unauthenticated")
    return authenticator


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port`; a ClickException naming the address when it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise click.ClickException(f"Cannot listen on {host}: the name does not resolve ({exc.strerror}).") from exc
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
    except OSError as exc:
        listener.close()
        hint = " Another program is using it: pick another with --http PORT." if exc.errno == errno.EADDRINUSE else ""
        raise click.ClickException(f"Cannot listen on {url_host(host)}:{port}: {exc.strerror}.{hint}") from exc
    return listener


class Stops:
    """The stop signals received outside uvicorn's own handlers."""

    def __init__(self) -> None:
        self.received: list[int] = []

    def keep(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
