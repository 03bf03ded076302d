"""Incremental rebuilds: only changed files are read again, and the table is the one a full build gives."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import lance
import lancedb
import pyarrow as pa
import pytest
from tests.indexer.conftest import PAUSED_BEFORE_COMMIT, kill_at_first_write, write_big_text
from tests.support import builds
from tests.support.documents import Line, make_pdf

from lancelot_indexer.cli import summary
from lancelot_indexer.documents import collect
from lancelot_indexer.embedding.vectors import VectorExtension
from lancelot_indexer.errors import EmbeddingError
from lancelot_indexer.pipeline import Options, build
from lancelot_indexer.readers import formats, html
from lancelot_indexer.writing import sources
from lancelot_schema import layout

BIN = Path(sys.executable).parent


def snapshot(db: Path) -> list[dict]:
    rows = lancedb.connect(db).open_table("documents").to_arrow().to_pylist()
    return sorted(rows, key=lambda row: row["id"])


def fts(db: Path, query: str) -> list[str]:
    table = lancedb.connect(db).open_table("documents")
    return sorted(row["id"] for row in table.search(query, query_type="fts", fts_columns="text").limit(100).to_list())


def full_build(docs: Path, tmp_path: Path, options: Options | None = None) -> list[dict]:
    """The table a build from scratch makes of `docs`, for comparison."""
    db = tmp_path / f"fresh-{time.monotonic_ns()}"
    build(docs, db, options)
    return snapshot(db)


def pages(root: Path, count: int = 12) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        body = "\n\n".join(f"Paragraph {p} of page {n} about gears and sprockets." for p in range(4))
        (root / f"page{n:02}.md").write_text(f"# Page {n}\n\n{body}\n", encoding="utf-8")
    return root


def test_edits_additions_removals_and_renames_read_only_those_files_and_give_the_full_build_table(docs, tmp_path):
    db = tmp_path / "db"
    first = build(docs, db)
    assert (first.read, first.kept, first.full) == (first.documents, 0, None)
    (docs / "guide" / "install.md").write_text("# Install\n\nUse the zeppelin installer.\n", encoding="utf-8")
    (docs / "added.md").write_text("# Added\n\nA brand new quokka page.\n", encoding="utf-8")
    (docs / "UPPER.TXT").unlink()
    (docs / "long.txt").rename(docs / "renamed.txt")
    report = build(docs, db, Options(keep_versions=timedelta(0)))
    assert report.strategy == "merge" and report.full is None
    # The edited, added and renamed documents are read; the six others keep their rows.
    assert (report.read, report.kept, report.removed) == (3, first.documents - 3, 2)
    assert report.documents == first.documents and report.chunks == len(snapshot(db))
    assert snapshot(db) == full_build(docs, tmp_path)
    assert [item.relative for item in report.skipped] == [item.relative for item in first.skipped]
    assert report.windows_1252 == first.windows_1252 == ["legacy.txt"]  # a kept file, still listed
    assert fts(db, "zeppelin") == ["guide/install.md#0"] and fts(db, "quokka") == ["added.md#0"]
    assert fts(db, "brew") == [] and fts(db, "shouting") == []  # the old text and the removed file are forgotten
    table = lancedb.connect(db).open_table("documents")
    assert all(table.index_stats(name).num_unindexed_rows == 0 for name in ("text_idx", "title_idx", "path_idx"))


def test_the_summary_counts_what_was_read_kept_and_removed(tmp_path):
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    (docs / "page03.md").write_text("# Page 3\n\nRewritten.\n", encoding="utf-8")
    (docs / "page04.md").unlink()
    out = subprocess.run([BIN / "lancelot-index", docs, db], capture_output=True, text=True, timeout=120, check=True)
    assert "Since the last build: 1 document read (new or changed), 10 unchanged, 1 removed." in out.stdout
    again = subprocess.run([BIN / "lancelot-index", docs, db, "--chunk-size", "300"], capture_output=True, text=True)
    assert "Read every document again: passage size 1200 -> 300." in again.stdout


# In a fresh process, as the command runs: workers are forked from it, so the counting parser is theirs too.
COUNTED = """
import sys
from pathlib import Path
from lancelot_indexer.documents import collect
from lancelot_indexer.pipeline import Options, build

parse, log = collect.parse, Path(sys.argv[3])

def counted(found, text):
    with log.open("a", encoding="utf-8") as handle:
        handle.write(found.relative + "\\n")
    return parse(found, text)

collect.parse = counted
build(Path(sys.argv[1]), Path(sys.argv[2]), Options(workers=2))
"""


def test_the_worker_processes_parse_only_the_changed_files(tmp_path):
    docs, db, log = pages(tmp_path / "docs", 80), tmp_path / "db", tmp_path / "parsed.log"

    def run() -> list[str]:
        log.write_text("", encoding="utf-8")
        subprocess.run([sys.executable, "-c", COUNTED, docs, db, log], check=True, timeout=120, capture_output=True)
        return sorted(log.read_text(encoding="utf-8").split())

    assert len(run()) == 80
    assert run() == []
    (docs / "page07.md").write_text("# Page 7\n\nNew text.\n", encoding="utf-8")
    (docs / "extra.md").write_text("# Extra\n\nMore.\n", encoding="utf-8")
    assert run() == ["extra.md", "page07.md"]
    assert snapshot(db) == full_build(docs, tmp_path)


def test_an_unchanged_folder_is_recognised_without_importing_lance(tmp_path):
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    code = (
        "import sys\nfrom pathlib import Path\nfrom lancelot_indexer.pipeline import build\n"
        "report = build(Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "print(report.documents, report.chunks, report.read, report.kept, 'lance' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, docs, db], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines()[-1].split() == ["12", str(len(snapshot(db))), "0", "12", "False"]


def test_a_table_changed_by_someone_else_is_read_to_learn_what_it_holds(tmp_path):
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    table = lancedb.connect(db).open_table("documents")
    # Another writer's commit: the saved copy no longer describes the table, so the table itself is read.
    table.delete("path = 'page05.md'")
    assert sources.cached(db / "documents.lance") is None
    report = build(docs, db)
    assert report.read == 1 and snapshot(db) == full_build(docs, tmp_path)
    assert sources.cached(db / "documents.lance") is not None


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (Options(chunk_size=300), "passage size 1200 -> 300"),
        (Options(language="none"), "language english -> none"),
        (Options(link="https://docs.example.com/{path}"), "link template none -> https://docs.example.com/{path}"),
        (Options(exclude=("page00.md",)), 'exclude [] -> ["page00.md"]'),
        (Options(keep_generated=True), "keep generated none -> true"),
    ],
)
def test_a_setting_that_changes_what_a_row_holds_reads_every_file_again(tmp_path, options, reason):
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    report = build(docs, db, options)
    assert report.full == reason and report.read == report.documents and report.kept == 0
    assert snapshot(db) == full_build(docs, tmp_path, options)
    assert build(docs, db, options).read == 0  # and the next rebuild with the same settings reads nothing


def test_a_table_of_an_older_layout_is_rebuilt_whole(tmp_path):
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    expected = snapshot(db)
    # The same rows as the layout-3 indexer wrote them: no file hashes, stamped layout 3.
    old = lancedb.connect(db).open_table("documents").to_arrow().drop_columns([layout.FILE_HASH])
    stamp = {key: value for key, value in (old.schema.metadata or {}).items() if key != layout.META_EXCLUDE.encode()}
    old = old.replace_schema_metadata({**stamp, layout.META_LAYOUT_VERSION.encode(): b"3"})
    lance.write_dataset(old, str(db / "documents.lance"), mode="overwrite")
    report = build(docs, db)
    assert report.full is not None and report.full.startswith(f"layout version 3 -> {layout.LAYOUT_VERSION}")
    assert report.read == 12 and snapshot(db) == expected


@pytest.mark.parametrize("saved_copy", [True, False], ids=["with-saved-copy", "read-from-the-table"])
def test_a_table_stamped_with_this_layout_but_lacking_a_column_reads_every_file_again(tmp_path, saved_copy):
    # A table written while the layout was still gaining columns (the same version stamped): its rows lack one.
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    (docs / "page00.md").write_text("---\ntags: [gears]\n---\n# Page 0\n\nAbout gears.\n", encoding="utf-8")
    build(docs, db)
    expected = snapshot(db)
    table = lance.dataset(str(db / "documents.lance"))
    table.drop_columns([layout.INDEXER_COLUMNS[-1]])
    if saved_copy:  # a copy saved by that indexer, naming the version it left
        record = json.loads((db / "documents.lance" / sources.CACHE).read_text(encoding="utf-8"))
        record.pop("columns")
        record["manifest"] = sources.Folder(db / "documents.lance").latest()
        (db / "documents.lance" / sources.CACHE).write_text(json.dumps(record), encoding="utf-8")
    report = build(docs, db)
    assert report.read == 12 and report.kept == 0
    assert snapshot(db) == expected
    assert build(docs, db).read == 0


def test_batches_of_a_few_rows_give_the_same_table_on_a_build_and_a_rebuild(tmp_path, monkeypatch):
    docs = pages(tmp_path / "docs")
    expected = full_build(docs, tmp_path)
    monkeypatch.setattr(collect, "BATCH_ROWS", 5)
    db = tmp_path / "db"
    build(docs, db)
    assert snapshot(db) == expected
    for n in range(0, 12, 3):
        (docs / f"page{n:02}.md").write_text(f"# Page {n}\n\nShorter now, with word{n}.\n", encoding="utf-8")
    build(docs, db, Options(chunk_size=300))  # a full merge, in batches
    build(docs, db)  # and back, then an incremental one
    assert snapshot(db) == full_build(docs, tmp_path)
    assert fts(db, "word6") == ["page06.md#0"]


def test_vectors_follow_renamed_and_kept_documents_and_only_new_texts_are_embedded(
    small_docs, tmp_path, embedding_server
):
    db = tmp_path / "db"

    def run():
        extension = VectorExtension(model="test-8", api_key="sk-test", base_url=embedding_server.url)
        build(small_docs, db, Options(), extension=extension)
        return extension.report

    first = run()
    embedding_server.reset()
    (small_docs / "notes.txt").rename(small_docs / "backups.txt")
    (small_docs / "new.md").write_text("# New\n\nA passage never embedded before.\n", encoding="utf-8")
    second = run()
    sent = [text for request in embedding_server.requests for text in request.inputs]
    assert sent == ["New\n\nA passage never embedded before."]  # the renamed file's vector was reused
    assert (second.embedded, second.reused) == (1, first.embedded)
    for row in snapshot(db):
        assert row[layout.VECTOR] == pytest.approx(embedding_server.vector(row[layout.TEXT], "test-8"), abs=1e-6)


class FailsOnSecondBatch:
    """An extension that adds nothing and fails on its second batch, as an embedding endpoint might."""

    def __init__(self) -> None:
        self.batches = 0

    def settings(self):
        return {}

    def extend(self, rows, current, staged):
        self.batches += 1
        if self.batches == 2:
            raise EmbeddingError("the endpoint went away")
        return rows, {}

    def kept(self, rows, width):
        pass


def test_an_error_while_batches_are_written_leaves_the_table_as_it_was(tmp_path, monkeypatch):
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    before, version = snapshot(db), lancedb.connect(db).open_table("documents").version
    for n in range(12):
        (docs / f"page{n:02}.md").write_text(f"# Page {n}\n\nAll new.\n", encoding="utf-8")
    monkeypatch.setattr(collect, "BATCH_ROWS", 3)
    with pytest.raises(EmbeddingError):
        build(docs, db, extension=FailsOnSecondBatch())
    assert snapshot(db) == before and lancedb.connect(db).open_table("documents").version == version


@pytest.mark.slow
def test_sigkill_during_an_incremental_rebuild_leaves_the_previous_table_readable(tmp_path):
    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    write_big_text(docs / "big.txt", 4 * 1024 * 1024)
    build(docs, db)
    before = snapshot(db)
    write_big_text(docs / "big.txt", 12 * 1024 * 1024)  # a large change: a long write to kill
    (docs / "page01.md").unlink()
    # Killed as its first data file appears; its commit is held, so a loaded machine cannot let it in first.
    command = [sys.executable, "-c", PAUSED_BEFORE_COMMIT, tmp_path / "written", "--quiet", docs, db]
    status = kill_at_first_write(command, db / "documents.lance")
    assert status == -signal.SIGKILL, "the indexer finished before it could be killed"
    assert snapshot(db) == before
    assert fts(db, "sprockets")  # searchable as it was
    report = build(docs, db)
    assert report.read == 1 and report.removed == 1
    assert snapshot(db) == full_build(docs, tmp_path)
    assert not list((db / "documents.lance").rglob(".tmp*"))


def test_the_saved_copy_is_json_naming_the_latest_manifest(tmp_path):
    docs, db = pages(tmp_path / "docs", 2), tmp_path / "db"
    build(docs, db)
    saved = json.loads((db / "documents.lance" / sources.CACHE).read_text(encoding="utf-8"))
    assert sorted(saved["files"]) == ["page00.md", "page01.md"]
    assert (db / "documents.lance" / "_versions" / saved["manifest"][0]).is_file()
    shutil.copytree(db, tmp_path / "copy", copy_function=shutil.copy)  # new modification times: the table is read
    assert sources.cached(tmp_path / "copy" / "documents.lance") is None
    assert build(docs, tmp_path / "copy").read == 0


def test_an_emptied_folder_is_refused_and_with_allow_empty_empties_the_table(tmp_path):
    docs, db = pages(tmp_path / "docs", 2), tmp_path / "db"
    build(docs, db)
    for page in docs.iterdir():
        page.unlink()
    with pytest.raises(Exception, match="No documents found"):
        build(docs, db)
    assert len(snapshot(db)) == 2
    report = build(docs, db, Options(allow_empty=True))
    assert (report.documents, report.chunks, report.removed) == (0, 0, 2) and snapshot(db) == []
    assert isinstance(lancedb.connect(db).open_table("documents").to_arrow(), pa.Table)


def test_a_run_stopped_between_its_commit_and_its_indexes_is_finished_by_the_next(tmp_path, monkeypatch):
    from lancelot_indexer.writing import write

    docs, db = pages(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    (docs / "page02.md").write_text("# Page 2\n\nA wombat appears.\n", encoding="utf-8")

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(write, "finish", stopped)
        with pytest.raises(KeyboardInterrupt):
            build(docs, db)
    table = lancedb.connect(db).open_table("documents")
    assert table.index_stats("text_idx").num_unindexed_rows > 0  # committed, not yet indexed
    assert fts(db, "wombat") == ["page02.md#0"]  # searched unindexed meanwhile
    report = build(docs, db)
    assert (report.read, report.kept) == (0, 12)  # the table already holds the new page
    table = lancedb.connect(db).open_table("documents")
    assert all(table.index_stats(name).num_unindexed_rows == 0 for name in ("text_idx", "title_idx", "path_idx"))
    assert snapshot(db) == full_build(docs, tmp_path)
    assert sources.cached(db / "documents.lance") is not None


def as_before_issue_27(db: Path) -> None:
    """Make the table what the indexer wrote before readers had revisions and builds were recognised: no stamp of
    either, and every passage's text as another reader would have made it ("old: " before it)."""
    table = lance.dataset(str(db / "documents.lance")).to_table()
    gone = {layout.META_READERS.encode(), layout.META_KEEP_GENERATED.encode()}
    stamp = {key: value for key, value in (table.schema.metadata or {}).items() if key not in gone}
    old = pa.compute.binary_join_element_wise("old: ", table[layout.TEXT], "")
    table = table.set_column(table.schema.get_field_index(layout.TEXT), layout.TEXT, old)
    lance.write_dataset(table.replace_schema_metadata(stamp), str(db / "documents.lance"), mode="overwrite")


def texts_by_path(db: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for row in snapshot(db):
        found.setdefault(row[layout.PATH], []).append(row[layout.TEXT])
    return found


def test_a_table_from_before_builds_were_recognised_loses_their_pages_and_reads_the_changed_formats_again(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    pages = builds.sphinx(docs / "html")
    (docs / "notes.md").write_text("# Notes\n\nSprockets wear.\n", encoding="utf-8")
    running = [
        [Line("Gear Manual", 9, 760), Line(f"Body of page {n}.", 11, 700), Line(str(n), 9, 40)] for n in range(4)
    ]
    (docs / "manual.pdf").write_bytes(make_pdf(running))
    build(docs, db, Options(keep_generated=True))  # every page of the build, as the indexer read them before
    as_before_issue_27(db)
    report = build(docs, db)
    generated = sorted(f"html/{path}" for path, authored in pages.items() if not authored)
    assert [page.relative for page in report.generated] == generated and report.removed == len(generated)
    # The formats whose reader changed are read again (.rst.txt: plain text before); Markdown's rows are kept.
    assert report.reread == {".html": 4, ".pdf": 1, ".rst.txt": 1} and report.kept == 1
    texts = texts_by_path(db)
    assert texts["notes.md"] == ["old: Notes\n\nSprockets wear."]
    assert texts["manual.pdf"] == [f"Body of page {n}." for n in range(4)]  # no running head, no page number
    assert sorted(texts) == sorted(["notes.md", "manual.pdf", *(f"html/{p}" for p, kept in pages.items() if kept)])
    fresh = {row["id"]: row for row in full_build(docs, tmp_path)}
    assert all(row == fresh[row["id"]] for row in snapshot(db) if row[layout.PATH] != "notes.md")
    assert "Read again as their reader changed: 6 documents (4 .html, 1 .pdf, 1 .rst.txt)." in summary(report)
    again = build(docs, db)
    assert (again.read, again.reread, len(again.generated)) == (0, {}, len(generated))


def test_a_table_of_contents_left_out_is_read_again_only_once_it_changes(tmp_path, monkeypatch):
    docs, db = tmp_path / "docs", tmp_path / "db"
    builds.sphinx(docs)
    # Read in this process, where the reader is counted.
    options = Options(workers=1, file_timeout=None, file_memory=None)
    build(docs, db, options)
    read, extract = [], html.extract
    monkeypatch.setattr(html, "extract", lambda text, name: read.append(name) or extract(text, name))
    report = build(docs, db, options)
    assert read == [] and "contents.html" in [page.relative for page in report.generated]
    with (docs / "contents.html").open("a", encoding="utf-8") as page:
        page.write("<!-- rebuilt -->\n")
    report = build(docs, db, options)
    assert read == ["contents.html"] and "contents.html" in [page.relative for page in report.generated]
    assert build(docs, db, options).read == 0 and read == ["contents.html"]


def test_a_reader_whose_revision_changed_reads_its_own_files_again_and_no_other(tmp_path, monkeypatch):
    docs, db = pages(tmp_path / "docs", 3), tmp_path / "db"
    (docs / "notes.txt").write_text("Plain notes.\n", encoding="utf-8")
    build(docs, db)
    newer = formats.Format("lancelot_indexer.markdown", revision=formats.MARKDOWN.revision + 1)
    monkeypatch.setitem(formats.FORMATS, ".md", newer)
    report = build(docs, db)
    assert (report.full, report.reread, report.read, report.kept) == (None, {".md": 3}, 3, 1)
    assert "Read again as their reader changed: 3 documents (3 .md)." in summary(report)
    assert build(docs, db).reread == {}
    (db / "documents.lance" / sources.CACHE).unlink()  # the table's own stamp says the same
    again = build(docs, db)
    assert (again.reread, again.read, again.kept) == ({}, 0, 4)
