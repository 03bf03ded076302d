"""`lancelot` servers a module's tests share, over real HTTP and over real stdio: one per database and
environment, for tests that only query a database no test changes (docs/decisions.md, "The suite's CPU").
A test that needs a fresh process (its start, its stderr, its state after a failure) starts its own."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from tests.e2e.stdio_server import parameters
from tests.e2e.test_http_server import Running, environment

T = TypeVar("T")
Key = tuple[str, tuple[tuple[str, str], ...]]


def _key(db: Path, environ: dict[str, str]) -> Key:
    return str(db), tuple(sorted(environ.items()))


class Servers:
    """Each server started when a test first asks for its transport, database and environment; all stopped
    by `close`, which fails unless each HTTP server exited cleanly. The stdio servers' client sessions live
    in one event loop on a thread of its own (an anyio blocking portal), so that they outlast each test's
    own calls."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._folders = tmp_path_factory
        self._running: dict[Key, Running] = {}
        self._sessions = contextlib.ExitStack()
        self._portal: BlockingPortal | None = None
        self._clients: dict[Key, Client] = {}

    def url(self, db: Path, **environ: str) -> str:
        """The URL of the module's `lancelot --http` for `db` and `environ`."""
        key = _key(db, environ)
        if key not in self._running:
            self._running[key] = Running(self._folders.mktemp("server"), environment(db, **environ))
        return self._running[key].url

    def over(self, transport: str, db: Path, session: Callable[[Client], Awaitable[T]], **environ: str) -> T:
        """`session(client)` against the module's server for `db` and `environ` over `transport` ("stdio" or
        "http"): a new client of the HTTP server, or the stdio server's one client session."""

        if transport == "http":

            async def connected(url: str) -> T:
                with anyio.fail_after(300):
                    async with Client(url) as client:
                        return await session(client)

            return anyio.run(connected, self.url(db, **environ))

        async def bounded(client: Client) -> T:
            with anyio.fail_after(300):
                return await session(client)

        key = _key(db, environ)
        if self._portal is None:
            self._portal = self._sessions.enter_context(start_blocking_portal())
        if key not in self._clients:
            client = self._portal.wrap_async_context_manager(Client(parameters(db, **environ)))
            self._clients[key] = self._sessions.enter_context(client)
        return self._portal.call(bounded, self._clients[key])

    def close(self) -> None:
        # The stdio clients close each server's stdin, and it exits; then the portal's loop ends.
        self._sessions.close()
        self._clients.clear()
        self._portal = None
        statuses = [running.stop() for running in self._running.values()]
        self._running.clear()
        assert statuses == [0] * len(statuses), statuses
