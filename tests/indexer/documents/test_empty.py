"""A run that finds nothing to index, through the real command: what the folder holds instead, which formats
are read (and the extra that adds PDF and Word when it is missing), and what became of the table, in one
message said once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from lancelot_indexer.cli import main

READ = ".md, .markdown, .txt, .html, .htm, .rst, .pdf, .docx"


def folder(root: Path, *names: str) -> Path:
    root.mkdir()
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"\x89PNG not a document")
    return root


def index(*arguments: str | Path):
    return CliRunner().invoke(main, [str(argument) for argument in arguments])


def test_a_folder_of_other_files_is_counted_by_suffix_and_no_table_is_claimed(tmp_path):
    pictures = [f"shots/{n}.png" for n in range(40)] + ["a.xlsx", "b.XLSX", "c.xlsx", "Makefile", ".hidden.txt"]
    docs = folder(tmp_path / "docs", *pictures)
    result = index(docs, tmp_path / "db")
    assert result.exit_code == 1
    assert result.output == (
        f"Error: No documents found in {docs}: it holds 40 .png, 3 .xlsx, 1 file without a suffix. "
        f"lancelot-index reads {READ}. No table was written.\n"
    )
    assert not (tmp_path / "db").exists()


def test_the_table_left_as_it_was_is_named_only_when_there_is_one(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    assert index(docs, tmp_path / "db", "--quiet").exit_code == 0
    (docs / "a.md").rename(docs / "a.png")
    result = index(docs, tmp_path / "db", "--exclude", "drafts", "--exclude", "*.png")
    assert result.exit_code == 1
    assert result.output == (
        f"Error: No documents found in {docs}: it holds 1 path left out by --exclude. --exclude 'drafts' matched "
        f"nothing. lancelot-index reads {READ}. The table 'documents' was left as it was; --allow-empty empties it.\n"
    )


def test_documents_that_cannot_be_read_are_named_with_their_reasons(tmp_path):
    docs = folder(tmp_path / "docs", "a.pdf", "b.pdf", "c.pdf", "d.pdf", "e.docx")
    result = index(docs, tmp_path / "db")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: No documents found in {docs}. Could not read a.pdf: damaged or not a PDF")
    assert "; and 2 more. lancelot-index reads" in result.output and "No table was written." in result.output


def test_without_the_pdf_and_word_extras_the_message_names_the_install(tmp_path):
    docs = folder(tmp_path / "docs", "notes.odt")
    # A None entry in sys.modules: the libraries as if never installed.
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["pypdfium2"] = None
        sys.modules["docx"] = None
        from lancelot_indexer.cli import main
        main([{str(docs)!r}, {str(tmp_path / "db")!r}])
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == (
        f"Error: No documents found in {docs}: it holds 1 .odt. lancelot-index reads {READ} (.pdf and .docx once "
        "installed with pip install 'lancelot-indexer[pdf,docx]'). No table was written.\n"
    )
