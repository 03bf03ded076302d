"""Shared pytest configuration: fixtures from `tests/support` are available to every test."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["tests.support.fixtures"]

EXAMPLE_DOCS = Path(__file__).resolve().parent.parent / "examples" / "docs"


@pytest.fixture(scope="session")
def indexed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database built once per session by the real `lancelot-index` over examples/docs (table "documents")."""
    db = tmp_path_factory.mktemp("indexed") / "db"
    command = [Path(sys.executable).parent / "lancelot-index", "--quiet", EXAMPLE_DOCS, db]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return db
