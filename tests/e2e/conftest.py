"""The end-to-end tests reuse the server tests' session database (built by the real indexer)."""

from tests.server.conftest import lancelot_db

__all__ = ["lancelot_db"]
