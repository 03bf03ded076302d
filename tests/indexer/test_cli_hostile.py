"""Hostile files through the real command: whatever a reader raises on a file costs that file only. It is
skipped with its reason, the rest is indexed, the run exits 0, and under --watch the watch goes on."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import lancedb
import pytest
from tests.support.documents import docx_with_body, self_kid_pdf

from .test_stop import all_ended, children
from .test_watch import LINE, WAIT, watch_command

BIN = Path(sys.executable).parent
# A one-row table whose only cell continues a vertical merge from a row above it: python-docx raises.
MERGED_FROM_NOWHERE = (
    b"<w:tbl><w:tblGrid><w:gridCol/></w:tblGrid><w:tr><w:tc><w:tcPr><w:vMerge/></w:tcPr>"
    b"<w:p><w:r><w:t>cell</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
)
FAILED_READERS = {
    "loop.pdf": "damaged or not a PDF (Failed to load page.)",
    "merged.docx": "could not be read (ValueError: no tr above topmost tr in w:tbl)",
}


def skipped(summary: str) -> dict[str, str]:
    """The summary's skipped files, by name, with their reasons."""
    return dict(re.findall(r"^  (\S+): (.+)$", summary.split("\nSkipped ", 1)[-1], re.MULTILINE))


def table(db: Path) -> dict[str, str]:
    rows = lancedb.connect(db).open_table("documents").to_arrow().to_pylist()
    return {row["path"]: row["text"] for row in rows}


def failing_readers(docs: Path) -> Path:
    """ok.md beside a PDF PDFium cannot load a page of, and a Word document python-docx raises on."""
    docs.mkdir()
    (docs / "ok.md").write_text("# Fine\n\nThis page is read.\n", encoding="utf-8")
    (docs / "loop.pdf").write_bytes(self_kid_pdf())
    (docs / "merged.docx").write_bytes(docx_with_body(MERGED_FROM_NOWHERE))
    return docs


def test_the_self_kid_pdf_is_238_bytes_and_pdfium_cannot_load_its_page():
    import pypdfium2

    data = self_kid_pdf()
    assert len(data) == 238
    document = pypdfium2.PdfDocument(data)
    with pytest.raises(pypdfium2.PdfiumError, match="Failed to load page"):
        document[0]
    document.close()


def test_a_file_a_reader_fails_on_is_skipped_with_its_reason_and_the_rest_is_indexed(tmp_path):
    docs, db = failing_readers(tmp_path / "docs"), tmp_path / "db"
    done = subprocess.run([BIN / "lancelot-index", docs, db], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert skipped(done.stdout) == FAILED_READERS
    assert table(db) == {"ok.md": "Fine\n\nThis page is read."}


@pytest.mark.skipif(sys.platform != "linux", reason="worker processes and /proc are Linux's")
def test_under_watch_a_file_a_reader_fails_on_is_skipped_and_the_watch_goes_on(tmp_path):
    docs, db = failing_readers(tmp_path / "docs"), tmp_path / "db"
    process = watch_command(docs, db)
    assert process.stdout is not None
    try:
        first = LINE.match(process.stdout.readline())
        assert first is not None and first.group(1) == "1 document, 1 chunk; 1 read, 0 unchanged, 0 removed, 2 skipped"
        assert process.stdout.readline() == f"Watching {docs} for changes (Ctrl-C to stop).\n"
        (docs / "zz-again.pdf").write_bytes(self_kid_pdf())  # a rebuild meets one more, in the reader processes
        (tmp_path / "more.md").write_text("More.\n", encoding="utf-8")
        (tmp_path / "more.md").rename(docs / "more.md")
        line = ""
        while "2 documents" not in line:  # the two changes may come as one rebuild or two
            match = LINE.match(process.stdout.readline())
            assert match is not None
            line = match.group(1)
        assert line.endswith(", 3 skipped")
        helpers = children(process.pid)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert (process.returncode, out) == (0, "Stopped watching.\n")
    assert "Traceback" not in err and "path=zz-again.pdf reason='damaged or not a PDF" in err
    assert all_ended(helpers)
    assert table(db) == {"ok.md": "Fine\n\nThis page is read.", "more.md": "More."}
