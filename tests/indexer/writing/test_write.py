"""Atomic replacement, crash safety, bounded growth and concurrent readers, on a real database."""

import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import lancedb
import pytest
from tests.indexer.conftest import kill_at_first_write, write_big_text

from lancelot_indexer.errors import DatabaseError, LockedError
from lancelot_indexer.pipeline import Options, build
from lancelot_indexer.writing.database import lock
from lancelot_schema import layout

pytestmark = pytest.mark.waits  # tests/support/ordering.py

BIN = Path(sys.executable).parent


def size_of(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def snapshot(db: Path) -> list[dict]:
    return sorted(lancedb.connect(db).open_table("documents").to_arrow().to_pylist(), key=lambda row: row["id"])


def small_docs(root: Path, files: int = 40, edition: int = 0) -> Path:
    root.mkdir(exist_ok=True)
    for n in range(files):
        body = "\n\n".join(f"Paragraph {p} of file {n}, edition {edition}: gears chains and spokes." for p in range(30))
        (root / f"doc{n:02}.md").write_text(f"# Document {n}\n\n{body}\n", encoding="utf-8")
    return root


@pytest.mark.slow
def test_sigkill_during_a_large_write_leaves_the_previous_table_complete(tmp_path):
    db = tmp_path / "db"
    build(small_docs(tmp_path / "small"), db)
    before = snapshot(db)
    big = tmp_path / "big"
    big.mkdir()
    for n in range(3):
        write_big_text(big / f"big{n}.txt", 12 * 1024 * 1024)
    status = kill_at_first_write([BIN / "lancelot-index", "--quiet", big, db], db / "documents.lance")
    assert status == -signal.SIGKILL, "the indexer finished before it could be killed"
    assert snapshot(db) == before
    table = lancedb.connect(db).open_table("documents")
    assert len(table.search("spokes", query_type="fts", fts_columns="text").limit(5000).to_list()) == len(before)
    # The next run succeeds and clears what the killed one left behind.
    build(small_docs(tmp_path / "small", edition=1), db)
    assert not list((db / "documents.lance").rglob(".tmp*"))
    assert all("edition 1" in row["text"] for row in snapshot(db) if "Paragraph" in row["text"])


def test_leftover_temp_files_are_removed_under_the_lock(tmp_path):
    db = tmp_path / "db"
    docs = small_docs(tmp_path / "docs", files=2)
    build(docs, db)
    leftover = db / "documents.lance" / "data" / ".tmp_abandoned.lance"
    leftover.write_bytes(b"x" * 1000)
    build(docs, db)
    assert not leftover.exists()


def test_a_table_folder_lance_cannot_write_is_a_database_error_naming_it(tmp_path):
    db = tmp_path / "db"
    db.mkdir()
    (db / "documents.lance").write_text("not a table", encoding="utf-8")
    with pytest.raises(DatabaseError, match=r"Cannot write table 'documents' in .*documents\.lance"):
        build(small_docs(tmp_path / "docs", files=1), db)
    assert (db / "documents.lance").read_text(encoding="utf-8") == "not a table"


# (`s3:bucket` is refused: a known scheme without its slashes is a mistyped URI; tests/indexer/test_cli.py)
@pytest.mark.parametrize("name", ["file:db", "memory:x", "c:db"])
def test_a_database_folder_named_like_a_url_is_a_local_folder(tmp_path, name):
    docs = small_docs(tmp_path / "docs", files=2)
    done = subprocess.run([BIN / "lancelot-index", docs, name], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert lancedb.connect(tmp_path / name).open_table("documents").count_rows() > 0
    again = subprocess.run([BIN / "lancelot-index", docs, name], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0 and "strategy=merge" in again.stderr  # it found the table it wrote


def test_a_second_indexer_is_refused_while_one_holds_the_lock(tmp_path):
    db = tmp_path / "db"
    docs = small_docs(tmp_path / "docs", files=2)
    progress: list[tuple[str, int, int]] = []
    with lock.locked(db), pytest.raises(LockedError, match="Another lancelot-index"):
        build(docs, db, on_progress=lambda *step: progress.append(step))
    assert progress == []  # refused before reading a single document


def test_ten_rebuilds_of_an_unchanged_folder_stay_under_three_times_one_build(tmp_path):
    docs = small_docs(tmp_path / "docs")
    db = tmp_path / "db"
    build(docs, db)
    one_build = size_of(db)
    for _ in range(10):
        build(docs, db)
    assert size_of(db) < 3 * one_build


@pytest.mark.slow
def test_rebuilds_that_change_everything_stay_bounded_while_a_reader_searches(tmp_path):
    db = tmp_path / "db"
    docs = tmp_path / "docs"
    keep = timedelta(seconds=0.5)
    build(small_docs(docs), db, Options(keep_versions=keep))
    one_build = size_of(db)
    expected = len(snapshot(db))  # every chunk mentions gears; every edition has the same shape
    errors: list[BaseException] = []
    searches = 0
    stop = threading.Event()

    def read() -> None:
        nonlocal searches
        table = lancedb.connect(db, read_consistency_interval=timedelta(seconds=0.2)).open_table("documents")
        while not stop.is_set():
            try:
                hits = table.search("gears", query_type="fts", fts_columns="text").limit(10_000).to_list()
                assert len(hits) == expected
                assert table.count_rows() == expected
                searches += 1
            except BaseException as exc:
                errors.append(exc)
                return

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for edition in range(1, 11):
            build(small_docs(docs, edition=edition), db, Options(keep_versions=keep))
            time.sleep(keep.total_seconds())
    finally:
        stop.set()
        reader.join(timeout=60)
    assert not errors, errors[0]
    assert searches > 10
    assert size_of(db) < 3 * one_build
    assert {row["text"].split("edition ")[-1][:2] for row in snapshot(db) if "edition" in row["text"]} == {"10"}


def test_a_layout_1_table_is_brought_to_layout_2_by_a_merge_with_locators_and_indexes(tmp_path):
    import lance

    docs, db = small_docs(tmp_path / "docs", files=5), tmp_path / "db"
    build(docs, db)
    current = snapshot(db)
    # The same rows as the indexer of layout 1 wrote them: no passage numbers, locators or B-tree indexes.
    old = (
        lancedb.connect(db)
        .open_table("documents")
        .to_arrow()
        .select(["id", "path", "title", "heading", "text", "text_hash"])
    )
    old = old.replace_schema_metadata({"lancelot.layout_version": "1", "lancelot.chunk_size": "1200"})
    lance.write_dataset(old, str(db / "documents.lance"), mode="overwrite")
    assert build(docs, db).strategy == "merge"
    table = lancedb.connect(db).open_table("documents")
    assert snapshot(db) == current  # every row has its passage number and lines again
    assert all(row["passage"] is not None and row["line_start"] is not None for row in current)
    assert {tuple(index.columns) for index in table.list_indices()} >= {("path",), ("passage",), ("text",)}
    assert (table.schema.metadata or {})[b"lancelot.layout_version"] == layout.LAYOUT_VERSION.encode()


def folder(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_an_unchanged_rebuild_rewrites_no_row_even_where_locators_are_null(tmp_path):
    page = "<title>P</title><p>No id anywhere on this page.</p>"
    docs, db = folder(tmp_path / "docs", {"page.html": page, "a.md": "# A\n\nText.\n"}), tmp_path / "db"

    def data_files():
        dataset = lancedb.connect(db).open_table("documents").to_lance()
        return sorted(file.path for fragment in dataset.get_fragments() for file in fragment.metadata.files)

    build(docs, db)
    before = data_files()
    build(docs, db)
    # Null anchors and lines compare equal to themselves: the merge updates no row, so no data file is new.
    assert data_files() == before
    (docs / "a.md").write_text("# A\n\nOther text.\n", encoding="utf-8")
    build(docs, db)
    assert data_files() != before


def index_uuids(db: Path) -> set[str]:
    indexes = lancedb.connect(db).open_table("documents").to_lance().describe_indices()
    return {segment.uuid for index in indexes for segment in index.segments}


def test_a_rebuild_in_another_language_remakes_the_full_text_indexes_and_the_same_one_keeps_them(tmp_path):
    zh, en = "# 网络配置\n\n编辑网络接口的配置文件。\n", "# Networks\n\nConfiguring the network interfaces.\n"
    docs, db = folder(tmp_path / "docs", {"zh.md": zh, "en.md": en}), tmp_path / "db"

    def indexes():
        dataset = lancedb.connect(db).open_table("documents").to_lance()
        found = {index.field_names[0]: index for index in dataset.describe_indices()}
        return {
            column: (found[column].details["base_tokenizer"], found[column].details["stem"])
            for column in layout.FULL_TEXT_COLUMNS
        }

    def finds(query):
        return lancedb.connect(db).open_table("documents").search(query, query_type="fts").limit(5).to_arrow().num_rows

    build(docs, db)
    assert set(indexes().values()) == {("simple", True)} and finds("网络") == 0
    uuids = index_uuids(db)
    assert build(docs, db, Options(language="cjk")).strategy == "merge"
    assert set(indexes().values()) == {("icu/split", False)}
    assert finds("网络") == 1 and finds("network") == 1  # Latin words are still split and found
    assert (lancedb.connect(db).open_table("documents").schema.metadata or {})[b"lancelot.language"] == b"cjk"
    remade = index_uuids(db)
    assert uuids != remade
    build(docs, db, Options(language="cjk"))
    assert index_uuids(db) == remade  # an unchanged folder in the same language touches no index


def test_a_large_table_gets_an_n_gram_index_on_its_text_beside_its_full_text_indexes(tmp_path, monkeypatch):
    from lancelot_indexer.writing import write

    docs, db = small_docs(tmp_path / "docs", files=3), tmp_path / "db"

    def indexes():
        dataset = lancedb.connect(db).open_table("documents").to_lance()
        return sorted((index.name, index.index_type, *index.field_names) for index in dataset.describe_indices())

    build(docs, db)
    assert ("text_ngram_idx", "NGram", "text") not in indexes()  # a small table is scanned instead
    monkeypatch.setattr(write, "NGRAM_MIN_ROWS", 3)
    (docs / "doc01.md").write_text("# Document 1\n\nEdited, so that the table is written.\n", encoding="utf-8")
    build(docs, db)
    with_ngram = indexes()
    assert ("text_ngram_idx", "NGram", "text") in with_ngram and ("text_idx", "Inverted", "text") in with_ngram
    (docs / "doc00.md").write_text("# Document 0\n\nNew words: velocipede.\n", encoding="utf-8")
    assert build(docs, db).strategy == "merge"
    assert indexes() == with_ngram  # neither taken for the other; the merge's rows folded into both
    table = lancedb.connect(db).open_table("documents")
    assert all(index.num_unindexed_rows == 0 for index in (table.index_stats(name) for name, *_ in with_ngram))
    build(docs, db, Options(fts=False))
    assert [kind for _, kind, *_ in indexes()] == ["Bitmap", "BTree", "BTree"]  # dropped with the full-text ones
    build(docs, db, Options(language="cjk"))
    assert indexes() == with_ngram


def test_a_search_filtered_by_file_type_finds_its_rows_in_a_bitmap_index(tmp_path):
    import pyarrow.compute as pc

    docs, db = small_docs(tmp_path / "docs", files=3), tmp_path / "db"
    build(docs, db)
    dataset = lancedb.connect(db).open_table("documents").to_lance()
    assert ("file_type_idx", "Bitmap", "file_type") in {
        (index.name, index.index_type, *index.field_names) for index in dataset.describe_indices()
    }
    plan = dataset.scanner(filter=pc.field("file_type").isin(["md"]), columns=["id"]).explain_plan(True)
    assert "ScalarIndexQuery" in plan and "file_type_idx" in plan, plan
    assert dataset.count_rows(pc.field("file_type").isin(["md"])) == dataset.count_rows()


def test_data_files_stay_within_the_cap_as_written_merged_and_compacted_and_read_the_same(tmp_path, monkeypatch):
    from lancelot_indexer.writing import indexes

    def files(db: Path) -> list[int]:
        """The rows of each data file of the table."""
        dataset = lancedb.connect(db).open_table("documents").to_lance()
        return [file.metadata.physical_rows for file in dataset.get_fragments()]

    def searched(db: Path) -> list[tuple]:
        table = lancedb.connect(db).open_table("documents")
        hits = table.search("spokes edition", query_type="fts", fts_columns="text").limit(40).to_list()
        read = table.search().where("path = 'doc03.md'").limit(100).to_list()
        return sorted((hit["id"], round(hit["_score"], 4)) for hit in hits) + sorted((row["id"],) for row in read)

    docs, whole, capped = small_docs(tmp_path / "docs", files=6), tmp_path / "whole", tmp_path / "capped"
    build(docs, whole)
    assert len(files(whole)) == 1
    cap = 4
    monkeypatch.setattr(indexes, "ROWS_PER_FILE", cap)
    build(docs, capped)
    assert len(files(capped)) > 2 and max(files(capped)) <= cap, files(capped)
    assert snapshot(capped) == snapshot(whole) and searched(capped) == searched(whole)
    # An incremental rebuild (one page) adds a file of its rows; one that changes every page, whose merge Lance
    # writes as one file of every row, and one that compacts (a large share changed) keep the cap too.
    for changed in (["doc01.md"], [f"doc{n:02}.md" for n in range(6)], ["doc02.md", "doc04.md"]):
        for name in changed:
            (docs / name).write_text((docs / name).read_text(encoding="utf-8") + "\nOne more: sprockets.\n", "utf-8")
        assert build(docs, capped).strategy == "merge"
        assert max(files(capped)) <= cap, (changed, files(capped))
        build(docs, whole)
        assert snapshot(capped) == snapshot(whole)
    assert searched(capped) == searched(whole)
    assert sum(files(capped)) == len(snapshot(capped))  # compacted: no file holds rows that were replaced
    assert not list((capped / "documents.lance" / "data").glob("*.tmp*"))
