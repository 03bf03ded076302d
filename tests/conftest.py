"""Shared pytest configuration: fixtures from `tests/support` are available to every test."""

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.indexing import run_index
from tests.support.logging_kept import logging_kept
from tests.support.once import built_once
from tests.support.ordering import groups, handout_order

pytest_plugins = ["tests.support.fixtures"]

# A runner started in the background by a shell without job control ignores SIGINT, and every process it
# starts inherits that: the indexer would then rightly never see the Ctrl-C the stop tests send it. A handled
# signal is reset to the default at exec, so the children start as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the xdist_group marks working under pytest 9.2. pytest-xdist 3.8 tells the scheduler a test's group
    by a suffix on its id, written where pytest 9.2 no longer reads it (pytest-xdist issue 1386): every test then
    went to any worker. Write the suffix where pytest reads it, unless pytest-xdist already did. And put the tests
    in the order they are to be handed out (`handout_order`)."""
    handout_order(items)
    if not getattr(config.option, "loadgroup", False):  # set on a worker of `--dist loadgroup`
        return
    from _pytest.nodeid import NodeId

    for item in items:
        if (name := groups(item)) and "@" not in item.nodeid.rsplit("]", 1)[-1]:
            item._id = NodeId.parse(f"{item.nodeid}@{name}")


EXAMPLE_DOCS = Path(__file__).resolve().parent.parent / "examples" / "docs"


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """Each test starts with logging configured as before it: a command run in this process (CliRunner) sets
    structlog's level for the process, and a later test's info lines vanished, on whichever worker ran both."""
    with logging_kept():
        yield


@pytest.fixture(scope="session")
def indexed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database built once per run by the real `lancelot-index` over examples/docs (table "documents"), run
    in this process (`run_index`)."""

    def build(folder: Path) -> None:
        run_index("--quiet", EXAMPLE_DOCS, folder / "db")

    return built_once(tmp_path_factory, "indexed", build) / "db"
