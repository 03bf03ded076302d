"""The short columns a ranking reads, held in memory per table version (what a server on a bucket does), over real
Lance tables built by the real indexer and rebuilt by it."""

from __future__ import annotations

import lance
import pyarrow as pa
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


def test_what_a_ranking_shows_is_held_in_few_bytes_and_ids_are_made_again(tmp_path):
    pages = {f"guide/page{n:02}.md": f"# Page {n}\n\n## Part\n\n" + "A spoke in the wheel. " * 200 for n in range(30)}
    dataset = lance.dataset(corpus.built(tmp_path, pages) / "documents.lance")
    shown = ["path", "id", "title", "heading", "passage", "line_start", "line_end", "anchor", "page", "meta"]
    held = Held(Budget(1024 * 1024)).columns(dataset, shown)
    assert held is not None
    rows = dataset.to_table(columns=shown, with_row_id=True).to_pylist()
    assert len(rows) > 100 and held.rows([row["_rowid"] for row in rows]) == rows
    assert held.nbytes < 20 * len(rows)  # the rows' text columns alone take more than 60 bytes each
    # The ids (`path#passage`) take nothing: made again from the path and passage number held.
    unnamed = Held(Budget(1024 * 1024)).columns(dataset, [name for name in shown if name != "id"])
    assert unnamed is not None and unnamed.nbytes == held.nbytes


def test_rows_another_writer_added_are_held_as_they_are(tmp_path):
    dataset = lance.dataset(corpus.built(tmp_path, DOCS) / "documents.lance")
    names = ["path", "id", "passage", "page", "title"]
    written = dataset.to_table(columns=dataset.schema.names)
    rows = written.to_pylist()
    # A data file of its own (a batch of the scan) whose ids are not `path#passage`, whose numbers need 32 bits
    # and whose pages are not all null: what the first batch held compactly is widened, its ids made again.
    added = [{**row, "id": f"other-{n}", "passage": 70_000 + n, "page": n or None} for n, row in enumerate(rows)]
    dataset = lance.write_dataset(pa.Table.from_pylist(added, schema=written.schema), dataset.uri, mode="append")
    assert len(dataset.get_fragments()) == 2
    # A deleted row: a gap in the row ids, of which nothing is made up.
    dataset.delete(f"id = '{rows[1]['id']}'")
    held = Held(Budget(1024 * 1024)).columns(dataset, names)
    assert held is not None
    table = dataset.to_table(columns=names, with_row_id=True).to_pylist()
    assert held.rows([row["_rowid"] for row in reversed(table)]) == table[::-1]
    assert held.rows([table[0]["_rowid"] + 1]) is None


def test_ids_beside_a_passage_number_that_is_not_whole_are_held_as_they_are(tmp_path):
    # Another tool's table: Arrow writes 1.0 as "1", so its ids would seem made of path and number; Python not.
    rows = [{"id": f"notes.md#{n}", "path": "notes.md", "passage": float(n), "text": "a"} for n in range(3)]
    dataset = lance.write_dataset(pa.Table.from_pylist(rows), tmp_path / "other.lance")
    held = Held(Budget(1024 * 1024)).columns(dataset, ["id", "path", "passage"])
    assert held is not None
    table = dataset.to_table(columns=["id", "path", "passage"], with_row_id=True).to_pylist()
    assert held.rows([row["_rowid"] for row in table]) == table
