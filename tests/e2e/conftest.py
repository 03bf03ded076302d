"""The end-to-end tests reuse the server tests' session database (built by the real indexer); a module's
tests that only query share its servers (`servers`)."""

from collections.abc import Iterator

import pytest
from tests.e2e.servers import Servers
from tests.server.conftest import lancelot_db

__all__ = ["lancelot_db"]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    shared = Servers(tmp_path_factory)
    yield shared
    shared.close()
