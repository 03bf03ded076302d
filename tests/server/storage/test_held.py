"""The short columns a ranking reads, held in memory per table version (what a server on a bucket does), over real
Lance tables built by the real indexer and rebuilt by it."""

from __future__ import annotations

import lance
from tests.server import corpus

from lancelot_server.storage.held import Budget, Held

DOCS = {
    "chain.md": "# Chain\n\nOil the chain after every wet ride.\n",
    "brakes.md": "# Brakes\n\nCheck the brake pads for wear before a chain of long descents.\n",
    "tyres.md": "# Tyres\n\nPump the tyres to the pressure on their sidewall.\n",
}
NAMES = ["path", "id", "title", "heading"]


def every_row(dataset):
    return dataset.to_table(columns=NAMES, with_row_id=True).to_pylist()


def test_held_rows_are_the_tables_rows_in_the_order_asked(tmp_path):
    dataset = lance.dataset(corpus.built(tmp_path, DOCS) / "documents.lance")
    budget = Budget(1024 * 1024)
    held = Held(budget).columns(dataset, NAMES)
    assert held is not None and budget.used_bytes == held.nbytes > 0
    rows = every_row(dataset)
    asked = [rows[2]["_rowid"], rows[0]["_rowid"]]
    assert held.rows(asked) == [rows[2], rows[0]]
    assert held.rows([rows[-1]["_rowid"] + 1]) is None  # an id of no row: nothing made up


def test_columns_that_do_not_fit_are_not_held_and_take_nothing(tmp_path):
    dataset = lance.dataset(corpus.built(tmp_path, DOCS) / "documents.lance")
    roomy = Held(Budget(1024 * 1024)).columns(dataset, NAMES)
    assert roomy is not None
    budget = Budget(roomy.nbytes - 1)
    assert Held(budget).columns(dataset, NAMES) is None
    assert budget.used_bytes == 0
    assert Held(None).columns(dataset, NAMES) is None  # no bound: never held


def test_a_new_version_drops_the_old_ones_columns_and_never_loads_them_again(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "docs", DOCS), tmp_path / "db"
    corpus.index(docs, db)
    old = lance.dataset(db / "documents.lance")
    budget = Budget(1024 * 1024)
    held = Held(budget)
    assert held.columns(old, NAMES) is not None
    corpus.write_docs(docs, {"guide/zeppelin.md": "# Airships\n\nA zeppelin floats on hydrogen or helium.\n"})
    corpus.index(docs, db)
    new = old.checkout_version(old.latest_version)
    held.moved_to(new.version)
    assert held.nbytes == 0 and budget.used_bytes == 0  # dropped at the refresh, not at the next search
    assert held.columns(old, NAMES) is None  # a request pinned before the refresh reads the old rows itself
    fresh = held.columns(new, NAMES)
    assert fresh is not None and fresh.version == new.version and budget.used_bytes == fresh.nbytes
    rows = every_row(new)
    assert "guide/zeppelin.md" in {row["path"] for row in rows}
    assert fresh.rows([row["_rowid"] for row in rows]) == rows
