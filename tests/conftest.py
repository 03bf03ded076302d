"""Shared pytest configuration: fixtures from `tests/support` are available to every test."""

import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["tests.support.fixtures"]

# A runner started in the background by a shell without job control ignores SIGINT, and every process it
# starts inherits that: the indexer would then rightly never see the Ctrl-C the stop tests send it. A handled
# signal is reset to the default at exec, so the children start as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

EXAMPLE_DOCS = Path(__file__).resolve().parent.parent / "examples" / "docs"


@pytest.fixture(scope="session")
def indexed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database built once per session by the real `lancelot-index` over examples/docs (table "documents")."""
    db = tmp_path_factory.mktemp("indexed") / "db"
    command = [Path(sys.executable).parent / "lancelot-index", "--quiet", EXAMPLE_DOCS, db]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return db
