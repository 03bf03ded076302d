"""Rows a rebuild has committed but not yet folded into the full-text index (`lancelot-index` merges,
then optimizes the index in a second commit): BM25 already finds them, by Lance's flat search of
unindexed rows, so text search does not drop to substring matching in between."""

from __future__ import annotations

import shutil

import lance
import pyarrow as pa


def test_bm25_finds_rows_the_index_does_not_cover_yet(lancelot_db, tmp_path, make_tools):
    db = tmp_path / "db"
    shutil.copytree(lancelot_db / "documents.lance", db / "documents.lance")
    dataset = lance.dataset(str(db / "documents.lance"))
    row = {name: None for name in dataset.schema.names}
    row |= {"id": "new#0", "path": "guide/velocipede.md", "title": "Velocipedes", "text": "Oil the velocipede."}
    # Written the way the indexer's merge leaves it: a new fragment, the index not optimized.
    lance.write_dataset(pa.Table.from_pylist([row], schema=dataset.schema), dataset.uri, mode="append")
    tools = make_tools(db)
    assert tools.store.table("documents").index_stats("text_idx").num_unindexed_rows == 1
    reply = tools.search("velocipede", mode="text")
    assert reply["textMatch"] == "bm25"
    assert [hit["source"] for hit in reply["hits"]] == ["guide/velocipede.md"]
