"""Collecting a folder of every format: PDF passages on their pages, unusable files skipped with a reason each,
a missing optional extra costing only its files, a PDF that makes PDFium spin stopped by the per-file limit,
and tables of layout 4 rebuilt with the page column."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import docx
import lance
import lancedb
import pytest
from tests.support.documents import Line, docx_bytes, make_pdf, spinning_pdf

from lancelot_indexer.documents.collect import collect
from lancelot_indexer.pipeline import build
from lancelot_schema import layout

ROOT = Path(__file__).resolve().parents[3]

PAGES = [
    [Line("Backups", 18, 720), Line("Take a backup with pg_dump every night.", 11, 690)],
    [Line("Restoring", 18, 720), Line("Restore it with pg_restore into an empty database.", 11, 690)],
]
RST = "Tuning\n======\n\nRaise ``work_mem`` for large sorts.\n\n.. note::\n   It is per operation.\n"


def word(*paragraphs: str) -> bytes:
    document = docx.Document()
    document.add_heading("Replication", level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    return docx_bytes(document)


def mixed(folder: Path) -> Path:
    folder.mkdir()
    (folder / "backups.pdf").write_bytes(make_pdf(PAGES, title="Backup Guide"))
    (folder / "replication.docx").write_bytes(word("Streaming replication ships the WAL."))
    (folder / "tuning.rst").write_text(RST, encoding="utf-8")
    (folder / "notes.md").write_text("# Notes\n\nVacuum often.\n", encoding="utf-8")
    return folder


def rows_by_path(columns):
    rows: dict[str, list[dict]] = {}
    for number in range(len(columns[layout.ID])):
        row = {name: values[number] for name, values in columns.items()}
        rows.setdefault(row[layout.PATH], []).append(row)
    return rows


def test_every_format_is_read_and_only_pdf_passages_have_pages(tmp_path):
    collected = collect(mixed(tmp_path / "docs"), 1200, workers=1, file_timeout=None, file_memory=None)
    assert collected.skipped == [] and collected.documents == 4
    rows = rows_by_path(collected.columns)
    pdf = rows["backups.pdf"]
    assert [(row[layout.PAGE], row[layout.HEADING], row[layout.TITLE]) for row in pdf] == [
        (1, "Backups", "Backup Guide"),
        (2, "Restoring", "Backup Guide"),
    ]
    assert "pg_restore" in pdf[1][layout.TEXT] and "pg_restore" not in pdf[0][layout.TEXT]
    assert all(row[layout.LINE_START] is None for row in pdf)
    assert rows["replication.docx"][0][layout.TITLE] == "Replication"
    assert "Streaming replication ships the WAL." in rows["replication.docx"][0][layout.TEXT]
    (tuning,) = rows["tuning.rst"]
    assert tuning[layout.TEXT] == "Tuning\n\nRaise work_mem for large sorts.\n\nIt is per operation."
    assert (tuning[layout.LINE_START], tuning[layout.LINE_END]) == (1, 7)
    for path in ("replication.docx", "tuning.rst", "notes.md"):
        assert all(row[layout.PAGE] is None for row in rows[path]), path


def test_a_word_title_paragraph_titles_the_rows_and_tops_their_heading_trail(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    document = docx.Document()
    document.add_heading("Replication Handbook", level=0)  # the Title style
    document.add_heading("Streaming", level=1)
    document.add_paragraph("Standbys replay the WAL.")
    (docs / "handbook.docx").write_bytes(docx_bytes(document))
    rows = rows_by_path(collect(docs, 1200, workers=1, file_timeout=None).columns)["handbook.docx"]
    assert [(row[layout.TITLE], row[layout.HEADING], row[layout.TEXT]) for row in rows] == [
        ("Replication Handbook", "Replication Handbook > Streaming", "Streaming\n\nStandbys replay the WAL.")
    ]


def test_sphinx_source_copies_are_read_as_rest(tmp_path):
    docs = tmp_path / "docs"
    (docs / "_sources").mkdir(parents=True)
    (docs / "_sources" / "install.rst.txt").write_text(
        "Installing\n==========\n\nUse pip.\n\nFrom source\n-----------\n\nRun ``make install``.\n", encoding="utf-8"
    )
    rows = rows_by_path(collect(docs, 1200, workers=1, file_timeout=None).columns)["_sources/install.rst.txt"]
    assert [(row[layout.TITLE], row[layout.HEADING], row[layout.TEXT], row[layout.FILE_TYPE]) for row in rows] == [
        ("Installing", "Installing", "Installing\n\nUse pip.", "rst"),
        ("Installing", "Installing > From source", "From source\n\nRun make install.", "rst"),
    ]


def test_encrypted_damaged_and_scanned_files_are_skipped_each_with_its_reason(tmp_path):
    docs = mixed(tmp_path / "docs")
    (docs / "locked.pdf").write_bytes(make_pdf(PAGES, password="secret"))
    (docs / "cut.pdf").write_bytes(make_pdf(PAGES)[:300])
    (docs / "scan.pdf").write_bytes(make_pdf([[], []], images=True))
    (docs / "cut.docx").write_bytes(word("x")[:200])
    collected = collect(docs, 1200, workers=1, file_timeout=None, file_memory=None)
    reasons = {item.relative: item.reason for item in collected.skipped}
    assert reasons.keys() == {"locked.pdf", "cut.pdf", "scan.pdf", "cut.docx"}
    assert reasons["locked.pdf"] == "encrypted: the PDF needs a password to open"
    assert reasons["cut.pdf"].startswith("damaged or not a PDF (")
    assert reasons["scan.pdf"].startswith("no text layer")
    assert reasons["cut.docx"].startswith("damaged or not a Word document (")
    assert collected.documents == 4  # the others are read all the same


def test_without_the_optional_libraries_their_files_are_skipped_with_the_install_command(tmp_path):
    docs = mixed(tmp_path / "docs")
    # A None entry in sys.modules makes `import` raise ImportError: the libraries as if never installed.
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["pypdfium2"] = None
        sys.modules["docx"] = None
        from pathlib import Path
        from lancelot_indexer.documents.collect import collect
        collected = collect(Path({str(docs)!r}), 1200, workers=2)
        for item in collected.skipped:
            print(item.relative, "::", item.reason)
        print("documents", collected.documents)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    # This environment's indexer came from this clone's folder: the clone's scripts/install adds an extra.
    install = ROOT / "scripts" / "install"
    assert done.stdout.splitlines() == [
        f"backups.pdf :: a PDF needs the optional 'pdf' extra: {install} --extras pdf",
        f"replication.docx :: a Word document needs the optional 'docx' extra: {install} --extras docx",
        "documents 2",
    ]


@pytest.mark.xdist_group("timing")  # a time budget
def test_a_pdf_that_makes_pdfium_spin_is_stopped_by_the_per_file_limit_and_the_run_goes_on(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a-fine.pdf").write_bytes(make_pdf(PAGES))
    # Forty million operators: seconds of PDFium's parsing (4 s on a quiet machine), far past the limit.
    (docs / "b-spinning.pdf").write_bytes(spinning_pdf(millions=40))
    (docs / "c-fine.md").write_text("# After\n\nRead after the spinning one.\n", encoding="utf-8")
    collected = collect(docs, 1200, workers=1, file_timeout=1.5)
    assert [(item.relative, item.reason) for item in collected.skipped] == [
        ("b-spinning.pdf", "reading it took longer than 1.5 s, the limit per file (--file-timeout)")
    ]
    assert sorted(set(collected.columns[layout.PATH])) == ["a-fine.pdf", "c-fine.md"]


def test_the_spinning_pdf_is_a_real_pdf_that_pdfium_reads_to_its_end(tmp_path):
    # The stand-in is honest: given the time, PDFium reads it, and its text is there at the end.
    from lancelot_indexer.readers.pdf import extract

    (block,) = extract(spinning_pdf(millions=1), "small-spin.pdf").blocks
    assert (block.text, block.page) == ("the end", 1)


def test_a_table_of_layout_4_is_rebuilt_whole_with_the_page_column_last(tmp_path):
    docs, db = mixed(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    expected = lancedb.connect(db).open_table("documents").to_arrow()
    layout_5 = [layout.PAGE, layout.META, layout.TAGS, layout.DATE, layout.FILE_TYPE]
    assert expected.schema.names == list(layout.INDEXER_COLUMNS) and expected.schema.names[-5:] == layout_5
    # The same rows as the layout-4 indexer wrote them: no layout 5 columns, stamped layout 4.
    old = expected.drop_columns(layout_5)
    stamp = old.schema.metadata or {}
    old = old.replace_schema_metadata({**stamp, layout.META_LAYOUT_VERSION.encode(): b"4"})
    lance.write_dataset(old, str(db / "documents.lance"), mode="overwrite")
    report = build(docs, db)
    assert report.full == f"layout version 4 -> {layout.LAYOUT_VERSION}"
    table = lancedb.connect(db).open_table("documents").to_arrow()
    assert table.schema.names == list(layout.INDEXER_COLUMNS)
    by_id = {row[layout.ID]: row[layout.PAGE] for row in table.to_pylist()}
    assert by_id == {row[layout.ID]: row[layout.PAGE] for row in expected.to_pylist()}
    assert by_id["backups.pdf#1"] == 2 and by_id["notes.md#0"] is None


# The format libraries a run imported in this (the parent) process, printed after it: a fresh process.
PARENT_RUN = """
import sys
from lancelot_indexer.cli import main
main(["--quiet", sys.argv[1], sys.argv[2]], standalone_mode=False)
print(sorted(name for name in ("pypdfium2", "docx", "lxml", "markdown_it") if name in sys.modules))
"""


def test_the_format_libraries_are_imported_by_the_reader_processes_never_by_the_cli(tmp_path):
    docs = mixed(tmp_path / "docs")
    done = subprocess.run(
        [sys.executable, "-c", PARENT_RUN, docs, tmp_path / "db"], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")
    table = lancedb.connect(tmp_path / "db").open_table("documents").to_arrow()
    assert sorted(set(table[layout.PATH].to_pylist())) == ["backups.pdf", "notes.md", "replication.docx", "tuning.rst"]


def test_a_rebuild_of_an_unchanged_folder_reads_no_pdf_or_word_file_again(tmp_path):
    docs, db = mixed(tmp_path / "docs"), tmp_path / "db"
    assert build(docs, db).read == 4
    again = build(docs, db)
    assert (again.read, again.kept, again.windows_1252) == (0, 4, [])
    (docs / "backups.pdf").write_bytes(make_pdf(list(reversed(PAGES)), title="Backup Guide"))
    changed = build(docs, db)
    assert (changed.read, changed.kept) == (1, 3)
    table = lancedb.connect(db).open_table("documents").to_arrow().to_pylist()
    rows = {row[layout.ID]: (row[layout.PAGE], row[layout.HEADING]) for row in table}
    assert (rows["backups.pdf#0"], rows["backups.pdf#1"]) == ((1, "Restoring"), (2, "Backups"))
