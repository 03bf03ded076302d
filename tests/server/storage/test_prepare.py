"""The store opens the default table in the background (`Store.prepare`) as a server starts: a search that
arrives first waits for that work and answers as it would have, never fails, and never opens the table twice."""

from __future__ import annotations

import threading

import pytest

from lancelot_server.errors import DatabaseNotFound
from lancelot_server.storage import lance_table


@pytest.fixture
def gated_open(monkeypatch):
    """`LanceTable.open` held at its start until `gate` is set; `opened` lists the tables it opened."""
    gate, entered, opened = threading.Event(), threading.Event(), []
    real_open = lance_table.LanceTable.open

    def held(uri, options, refresh):
        entered.set()
        assert gate.wait(30), "the gate was never opened"
        opened.append(uri)
        return real_open(uri, options, refresh)

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


def test_a_stopping_server_settles_once_the_table_is_open_or_the_bound_ends(lancelot_db, make_tools, gated_open):
    gate, entered, opened = gated_open
    tools = make_tools(lancelot_db)
    tools.store.prepare("documents")
    assert entered.wait(30)
    settling = threading.Thread(target=tools.store.settle, args=(30,))
    settling.start()
    settling.join(0.3)
    assert settling.is_alive()  # the opening is under way: the stop waits for it
    gate.set()
    settling.join(30)
    assert not settling.is_alive() and len(opened) == 1
    gate.clear()
    held = make_tools(lancelot_db)
    held.store.prepare("documents")
    assert entered.wait(30)
    settling = threading.Thread(target=held.store.settle, args=(0.2,))
    settling.start()
    settling.join(30)
    assert not settling.is_alive() and len(opened) == 1  # it returned at its bound, the opening still held
    gate.set()


def test_settle_without_a_preparation_returns_at_once(lancelot_db, make_tools):
    make_tools(lancelot_db).store.settle(30)
