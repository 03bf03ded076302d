"""`lancelot --http` servers a module's tests share: one per database and environment, for tests that only
query a database no test changes (docs/decisions.md, "The suite's CPU")."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.e2e.test_http_server import Running, environment


class HttpServers:
    """Each server started when a test first asks for its database and environment; all stopped by `close`,
    which fails unless each exited cleanly."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._folders = tmp_path_factory
        self._running: dict[tuple[str, tuple[tuple[str, str], ...]], Running] = {}

    def url(self, db: Path, **environ: str) -> str:
        key = (str(db), tuple(sorted(environ.items())))
        if key not in self._running:
            self._running[key] = Running(self._folders.mktemp("server"), environment(db, **environ))
        return self._running[key].url

    def close(self) -> None:
        statuses = [running.stop() for running in self._running.values()]
        self._running.clear()
        assert statuses == [0] * len(statuses), statuses
