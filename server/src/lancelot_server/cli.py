"""`lancelot`: the MCP server over stdio (default) or Streamable HTTP (`--http`)."""

from __future__ import annotations

import os

import click
import structlog

from lancelot_server import __version__

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# How long a stopping server waits for the table's background opening (`Store.settle`).
SETTLE_SECONDS = 30

log = structlog.get_logger("lancelot.server")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="lancelot")
@click.option(
    "--http",
    "http_port",
    type=click.IntRange(1, 65535),
    is_flag=False,
    flag_value=3000,
    default=None,
    metavar="[PORT]",
    help="Serve MCP Streamable HTTP on PORT (default 3000) instead of stdio.",
)
@click.option("--host", default=None, metavar="HOST", help="With --http: the address to bind (default 127.0.0.1).")
@click.option(
    "--request-timeout",
    type=click.FloatRange(0, min_open=True),
    default=30.0,
    show_default=True,
    envvar="LANCELOT_HTTP_REQUEST_TIMEOUT",
    metavar="SECONDS",
    help="With --http: the time a request's headers may take to arrive, and then its body (408 after).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1),
    default=None,
    envvar="LANCELOT_HTTP_MAX_CONNECTIONS",
    metavar="N",
    help="With --http: connections open at once; past it one long awaiting its request makes room, else 503 "
    "[default: 1000, at most half the open-file limit].",
)
@click.option(
    "--max-requests",
    type=click.IntRange(1),
    default=64,  # inflight.MAX_REQUESTS, which says why
    show_default=True,
    envvar="LANCELOT_HTTP_MAX_REQUESTS",
    metavar="N",
    help="With --http: requests answered at once, counted once their body has arrived; past it, 503 with "
    "Retry-After: 1.",
)
@click.option(
    "--allow-unauthenticated",
    is_flag=True,
    help="With --http on an address other than loopback: serve without authentication (a proxy in front "
    "must check callers). Without it, such a server needs LANCELOT_AUTH_TOKENS(_FILE) or LANCELOT_OAUTH_*.",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default="INFO",
    show_default=True,
    help="Least severe log level written to stderr.",
)
def main(
    http_port: int | None,
    host: str | None,
    request_timeout: float,
    max_connections: int | None,
    max_requests: int,
    allow_unauthenticated: bool,
    log_level: str,
) -> None:
    """Serve Lancelot's read-only search tools to an MCP client over stdio, or over HTTP with --http.

    Settings come from the environment (LANCEDB_PATH, LANCEDB_TABLE, OPENAI_API_KEY, ...), then from what
    lancelot-init stored. Logs go to stderr; stdout carries MCP messages only.
    """
    if host is not None and http_port is None:
        raise click.UsageError("--host goes with --http: add --http [PORT].")
    if allow_unauthenticated and http_port is None:
        raise click.UsageError("--allow-unauthenticated goes with --http: stdio never authenticates.")
    from lancelot_server.stdio import StdoutDiversion

    diversion = StdoutDiversion()
    from lancelot_schema import logs, settings

    logs.configure(log_level)
    # Never fails: a damaged settings file or unreadable keychain is a warning; the environment still applies.
    resolved = settings.load(os.environ)

    from lancelot_server.storage.store import Store

    for problem in resolved.warnings:
        log.warning(problem)
    store = Store(resolved.db_path, resolved.storage)
    # A stat or two, never Lance: a server started in the wrong place says so at once, not at the first search.
    if (wrong := store.problem(resolved.table)) is not None:
        log.warning(wrong)
    opened = None
    if http_port is not None:
        from lancelot_server.http import opening

        # Before the SDK's import: a refused start is refused at once (http/opening.py says why).
        opened = opening.open_port(
            resolved,
            host or opening.DEFAULT_HOST,
            http_port,
            allow_unauthenticated=allow_unauthenticated,
            log_level=log_level,
        )
    from lancelot_server import app

    server = app.build_server(resolved, store)
    if opened is not None:
        from lancelot_server.http import serve

        # stdout stays diverted to stderr for the whole run: over HTTP nothing may reach it.
        store.prepare(resolved.table)
        try:
            serve.serve(
                server,
                resolved,
                opened,
                request_timeout=request_timeout,
                max_connections=max_connections,
                max_requests=max_requests,
            )
        finally:
            store.settle(SETTLE_SECONDS)
        return
    log.info("serving over stdio", db=resolved.db_path, table=resolved.table, version=__version__)
    diversion.hand_back()
    # Once the transport holds stdout, Lance's import and the table's opening go on in the background while
    # the client's handshake (and, in an assistant, the person's first question) comes in.
    try:
        app.serve_stdio(server, serving=lambda: store.prepare(resolved.table))
    finally:
        store.settle(SETTLE_SECONDS)
