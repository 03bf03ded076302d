"""The end-to-end tests reuse the server tests' session database (built by the real indexer); a module's
tests that only query share its HTTP servers (`http_servers`)."""

from collections.abc import Iterator

import pytest
from tests.e2e.http_servers import HttpServers
from tests.server.conftest import lancelot_db

__all__ = ["lancelot_db"]


@pytest.fixture(scope="module")
def http_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServers]:
    servers = HttpServers(tmp_path_factory)
    yield servers
    servers.close()
