"""The table the server reads through Lance: rows taken by id, and a handle pinned to one version while the real
indexer rebuilds the table under it."""

from __future__ import annotations

import lancedb
import pytest
from tests.server import corpus

from lancelot_server.errors import TableLayoutError
from lancelot_server.search import core
from lancelot_server.storage.store import describe

DOCS = {
    "chain.md": "# Chain\n\nOil the chain after every wet ride.\n",
    "brakes.md": "# Brakes\n\nCheck the brake pads for wear before a chain of long descents.\n",
    "tyres.md": "# Tyres\n\nPump the tyres to the pressure on their sidewall.\n",
}


def every_row(handle):
    return handle.search().select(["id", "text"]).with_row_id().limit(None).to_arrow().to_pylist()


def test_rows_taken_by_id_come_in_row_id_order_with_their_ids_and_only_the_columns_asked(tmp_path, make_tools):
    db = corpus.built(tmp_path, DOCS)
    handle = make_tools(db).store.table("documents")
    rows = every_row(handle)
    asked = [rows[2]["_rowid"], rows[0]["_rowid"], rows[2]["_rowid"]]
    taken = handle.take_row_ids(asked).select(["id"]).with_row_id().to_arrow()
    assert taken.column_names == ["id", "_rowid"]
    assert taken.to_pylist() == [
        {"id": rows[0]["id"], "_rowid": rows[0]["_rowid"]},
        {"id": rows[2]["id"], "_rowid": rows[2]["_rowid"]},
    ]
    assert handle.take_row_ids([]).select(["id"]).to_arrow().num_rows == 0


def test_an_id_the_table_no_longer_holds_is_left_out(tmp_path, make_tools):
    db = corpus.built(tmp_path, DOCS)
    handle = make_tools(db).store.table("documents")
    before = every_row(handle)
    corpus.write_docs(tmp_path / "docs", {"tyres.md": "# Tyres\n\nNew words about tyres.\n"})
    corpus.index(tmp_path / "docs", db)  # a rebuild: Lance rewrote the rows, under new ids
    after = every_row(handle)
    assert not {row["_rowid"] for row in before} & {row["_rowid"] for row in after}
    kept = after[1]
    taken = handle.take_row_ids([before[0]["_rowid"], kept["_rowid"], 999 << 32]).select(["id", "text"]).to_arrow()
    assert taken.to_pylist() == [{"id": kept["id"], "text": kept["text"]}]


def test_a_pinned_table_reads_its_version_whatever_a_rebuild_commits(tmp_path, make_tools):
    db = corpus.built(tmp_path, DOCS)
    tools = make_tools(db)
    handle = tools.store.table("documents")
    pinned = handle.pinned()
    table_layout = describe(pinned.schema, "text", "documents")
    corpus.write_docs(tmp_path / "docs", {"chain.md": "# Chain\n\nA new page: wax the chain instead.\n"})
    corpus.index(tmp_path / "docs", db)
    assert handle.version > pinned.version  # the shared handle follows the rebuild (refresh 0)...
    # ...while a search on the pinned one ranks and then reads its own version's rows: the old text, whole.
    hits = core.bm25(pinned, table_layout, "chain", core.Wanted(5, per_document=1), {"text"})
    assert {hit["source"]: hit["text"] for hit in hits} == {
        "chain.md": "Chain\n\nOil the chain after every wet ride.",
        "brakes.md": "Brakes\n\nCheck the brake pads for wear before a chain of long descents.",
    }
    fresh = tools.search("chain", mode="text", limit=5)["hits"]
    assert [hit["text"] for hit in fresh if hit["source"] == "chain.md"] == [
        "Chain\n\nA new page: wax the chain instead."
    ]


def test_the_indexes_are_described_once_a_version_for_every_request(tmp_path, make_tools):
    # Each request reads a pinned copy; the description it asks for is kept for the next one, until a rebuild.
    db = corpus.built(tmp_path, DOCS)
    handle = make_tools(db).store.table("documents")
    first = handle.pinned().list_indices()
    assert "FTS" in {index.index_type for index in first}
    assert handle.pinned().list_indices() is first
    corpus.write_docs(tmp_path / "docs", {"chain.md": "# Chain\n\nWax the chain instead.\n"})
    corpus.index(tmp_path / "docs", db)
    rebuilt = handle.pinned().list_indices()
    assert rebuilt is not first and handle.pinned().list_indices() is rebuilt


def test_what_is_derived_from_a_version_is_derived_once_and_a_failure_is_not_kept(tmp_path, make_tools):
    db = corpus.built(tmp_path, DOCS)
    handle = make_tools(db).store.table("documents")
    derived: list[int] = []

    def derive(dataset):
        derived.append(dataset.version)
        return object()

    def refuse(dataset):
        raise ValueError("refused")

    first = handle.pinned().kept("thing", derive)
    assert handle.pinned().kept("thing", derive) is first and handle.kept("thing", derive) is first
    for _ in range(2):  # tried again each time, never kept
        with pytest.raises(ValueError, match="refused"):
            handle.kept("other", refuse)
    corpus.write_docs(tmp_path / "docs", {"chain.md": "# Chain\n\nWax the chain instead.\n"})
    corpus.index(tmp_path / "docs", db)
    assert handle.pinned().kept("thing", derive) is not first
    assert len(derived) == 2 and derived[1] > derived[0]  # once for each version read


def test_a_table_rewritten_with_other_columns_is_described_anew_at_the_next_search(tmp_path, make_tools):
    db = tmp_path / "db"
    corpus.plain_table(db, "notes", [{"body": "Oil the chain after every ride."}])
    tools = make_tools(db, LANCEDB_TABLE="notes")
    with pytest.raises(TableLayoutError, match="no text column 'text'"):
        tools.search("chain", mode="text")
    rows = [{"text": "Oil the chain after every ride.", "title": "Chain"}]
    lancedb.connect(str(db)).create_table("notes", rows, mode="overwrite")
    assert [hit["title"] for hit in tools.search("chain", mode="text")["hits"]] == ["Chain"]
    lancedb.connect(str(db)).create_table("notes", [{"text": rows[0]["text"]}], mode="overwrite")
    assert [hit.get("title") for hit in tools.search("chain", mode="text")["hits"]] == [None]


def test_a_ranking_among_given_rows_scores_those_alone_as_the_whole_table_would(tmp_path, make_tools):
    from lance.query import MatchQuery

    handle = make_tools(corpus.built(tmp_path, DOCS)).store.table("documents")
    ranked = handle.search(MatchQuery("chain", "text"), query_type="fts").select(["id", "_score"]).with_row_id()
    every = ranked.to_arrow().to_pylist()
    assert len(every) == 2
    among = ranked.among([every[1]["_rowid"], every[1]["_rowid"]]).to_arrow().to_pylist()
    assert among == [every[1]]  # the same score: the whole table's statistics, not those of one row
    assert ranked.among([]).to_arrow().num_rows == 0
