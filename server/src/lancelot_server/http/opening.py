"""What `lancelot --http` checks and takes before it serves: the auth settings, the address, the stop signals."""

from __future__ import annotations

import errno
import socket
from types import FrameType

import click
import structlog

from lancelot_schema.settings import Settings
from lancelot_server.auth import bearer
from lancelot_server.http.guard import is_loopback

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3000

log = structlog.get_logger("lancelot.http")


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
