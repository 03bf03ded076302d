"""What a table was built from: the settings that decide a full rebuild, and the copy beside the table."""

import lancedb

from lancelot_indexer.pipeline import build
from lancelot_indexer.writing import sources
from lancelot_schema import layout


def test_a_full_rebuild_is_named_by_the_first_setting_that_differs():
    before = sources.settings_of({layout.META_CHUNK_SIZE: "1200", layout.META_LANGUAGE: "english"})
    assert sources.full_rebuild_reason(before, dict(before)) is None
    after = {**before, layout.META_LANGUAGE: "cjk", layout.META_EMBEDDING_MODEL: "m"}
    assert sources.full_rebuild_reason(before, after) == "language english -> cjk"
    assert sources.full_rebuild_reason(before, {**before, layout.META_EMBEDDING_MODEL: "m"}) == (
        "embedding model none -> m"
    )


def test_the_copy_holds_while_the_table_is_the_version_it_describes(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    db, table_dir = tmp_path / "db", tmp_path / "db" / "documents.lance"
    assert sources.cached(table_dir) is None
    build(docs, db)
    cached = sources.cached(table_dir)
    table = lancedb.connect(db).open_table("documents")
    assert cached is not None and (cached.rows, cached.version) == (1, table.version)
    assert cached == sources.from_table(table.to_lance(), fts=True)
    table.add(table.to_arrow())  # any later commit, ours or another writer's
    assert sources.cached(table_dir) is None
    (table_dir / sources.CACHE).write_text("{not json", encoding="utf-8")
    assert sources.cached(table_dir) is None
