"""The store opens the default table in the background (`Store.prepare`) as a server starts: a search that
arrives first waits for that work and answers as it would have, never fails, and never opens the table twice."""

from __future__ import annotations

import threading
import time

import pytest

from lancelot_server.errors import DatabaseNotFound
from lancelot_server.storage import lance_table

# Timing budgets: one worker runs these modules' tests one after another, however many workers run.
pytestmark = pytest.mark.xdist_group("timing")

# "Well before" settle's 30 s bound: far more than the opening takes on a loaded machine, far less than 30 s.
SOON = 5.0


@pytest.fixture
def gated_open(monkeypatch):
    """`LanceTable.open` held at its start until `gate` is set; `opened` lists the tables it opened."""
    gate, entered, opened = threading.Event(), threading.Event(), []
    real_open = lance_table.LanceTable.open

    def held(uri, *arguments):
        entered.set()
        assert gate.wait(30), "the gate was never opened"
        opened.append(uri)
        return real_open(uri, *arguments)

    monkeypatch.setattr(lance_table.LanceTable, "open", staticmethod(held))
    return gate, entered, opened


def test_a_search_that_arrives_before_the_table_is_open_waits_for_it_and_is_answered(
    lancelot_db, make_tools, gated_open
):
    gate, entered, opened = gated_open
    gate.set()
    expected = make_tools(lancelot_db).search("hiss of escaping air", mode="text")
    assert expected["hits"]
    gate.clear()
    entered.clear()
    opened.clear()
    tools = make_tools(lancelot_db)
    tools.store.prepare("documents")
    assert entered.wait(30)  # the background work is inside the table's opening
    replies = []
    search = threading.Thread(target=lambda: replies.append(tools.search("hiss of escaping air", mode="text")))
    search.start()
    search.join(0.3)
    assert search.is_alive() and replies == []  # it waits, rather than failing or opening the table itself
    gate.set()
    search.join(30)
    assert replies == [expected]
    assert len(opened) == 1 and opened[0].endswith("documents.lance")


def test_a_background_failure_is_met_again_and_reported_by_the_first_call(tmp_path, make_tools):
    tools = make_tools(tmp_path / "missing")
    tools.store.prepare("documents")
    with pytest.raises(DatabaseNotFound, match="does not exist"):
        tools.search("hiss", mode="text")
    assert not (tmp_path / "missing").exists()  # nothing was created on the way


def test_a_store_without_a_database_prepares_nothing(make_tools):
    tools = make_tools("")
    tools.store.prepare("documents")
    assert tools.store._preparing is None


def settle_timed(store, seconds):
    """Start `store.settle(seconds)` in a thread; the thread, and a list that gets its duration in seconds."""
    took: list[float] = []

    def settle():
        started = time.monotonic()
        store.settle(seconds)
        took.append(time.monotonic() - started)

    settling = threading.Thread(target=settle)
    settling.start()
    return settling, took


def test_a_stopping_server_settles_once_the_table_is_open_or_the_bound_ends(lancelot_db, make_tools, gated_open):
    gate, entered, opened = gated_open
    tools = make_tools(lancelot_db)
    tools.store.prepare("documents")
    assert entered.wait(30)
    settling, took = settle_timed(tools.store, 30)
    settling.join(0.3)
    assert settling.is_alive()  # the opening is under way: the stop waits for it
    gate.set()
    opened_at = time.monotonic()
    settling.join(60)
    assert not settling.is_alive() and len(opened) == 1
    # It returned as the opening ended, well before its 30 s bound (the bound is the stop's, not a pause).
    assert time.monotonic() - opened_at < SOON and took[0] < 0.3 + SOON
    gate.clear()
    held = make_tools(lancelot_db)
    held.store.prepare("documents")
    assert entered.wait(30)
    settling, took = settle_timed(held.store, 0.2)
    settling.join(30)
    assert not settling.is_alive() and len(opened) == 1  # it returned at its bound, the opening still held
    assert 0.2 <= took[0] < SOON
    gate.set()


def test_settle_without_a_preparation_returns_at_once(lancelot_db, make_tools):
    tools = make_tools(lancelot_db)
    started = time.monotonic()
    tools.store.settle(30)
    assert time.monotonic() - started < SOON
