"""The Word reader over .docx files made with python-docx in the tests."""

from __future__ import annotations

import docx
import pytest
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls
from tests.support.documents import docx_bytes

from lancelot_indexer.chunking.chunk import chunk
from lancelot_indexer.readers.formats import Unreadable
from lancelot_indexer.readers.word import extract


def manual(title: str | None = "The Handbook") -> bytes:
    document = docx.Document()
    if title is not None:
        document.core_properties.title = title
    document.add_heading("Installing", level=1)
    document.add_paragraph("Download the package for your system.")
    document.add_paragraph("Linux", style="List Bullet")
    document.add_paragraph("Debian and Ubuntu", style="List Bullet 2")
    document.add_paragraph("macOS", style="List Bullet")
    document.add_heading("Options", level=2)
    table = document.add_table(rows=3, cols=3)
    for row, cells in zip(table.rows, [("Name", "Default", "Meaning"), ("--quiet", "off", "say less")], strict=False):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    merged = table.rows[2].cells[0].merge(table.rows[2].cells[2])
    merged.text = "Every option has a long name."
    document.add_heading("Running", level=1)
    document.add_paragraph("Start it with one command.\nIt prints its progress.")
    return docx_bytes(document)


def test_paragraphs_headings_lists_and_tables_in_document_order():
    found = [(block.level, block.text) for block in extract(manual(), "guide.docx").blocks]
    assert found == [
        (1, "Installing"),
        (0, "Download the package for your system."),
        (0, "- Linux\n  - Debian and Ubuntu\n- macOS"),
        (2, "Options"),
        (0, "Name | Default | Meaning\n--quiet | off | say less\nEvery option has a long name."),
        (1, "Running"),
        (0, "Start it with one command.\nIt prints its progress."),
    ]


def test_headings_make_the_heading_trail():
    pieces = chunk(extract(manual(), "guide.docx").blocks, 1000)
    assert [piece.heading for piece in pieces] == ["Installing", "Installing > Options", "Running"]
    assert all(piece.page is None and piece.line_start is None for piece in pieces)


def test_the_title_is_the_core_properties_title_else_the_first_heading_else_the_file_name():
    assert extract(manual(), "guide.docx").title == "The Handbook"
    assert extract(manual(title=None), "guide.docx").title == "Installing"
    document = docx.Document()
    document.add_paragraph("Only a paragraph.")
    assert extract(docx_bytes(document), "memo.docx").title == "memo.docx"


def report(core_title: str | None = None) -> bytes:
    document = docx.Document()
    if core_title is not None:
        document.core_properties.title = core_title
    document.add_heading("Annual  Report\n2024", level=0)  # level 0: the Title style
    document.add_paragraph("Revenue grew.")
    document.add_heading("Costs", level=1)
    document.add_paragraph("Costs fell.")
    document.add_heading("Travel", level=2)
    document.add_paragraph("Fewer flights.")
    document.add_heading("Appendix", level=0)  # a second Title paragraph: a heading like Heading 1
    document.add_paragraph("Tables.")
    return docx_bytes(document)


def test_the_title_paragraph_titles_the_document_and_tops_every_heading_trail_in_no_passage():
    found = extract(report(), "report.docx")
    assert found.title == "Annual Report 2024" and found.title_heads_trail
    assert [(block.level, block.text) for block in found.blocks][:2] == [(0, "Revenue grew."), (1, "Costs")]
    pieces = chunk(found.blocks, 1000, found.title)
    assert [(piece.heading, piece.text) for piece in pieces] == [
        ("Annual Report 2024", "Revenue grew."),
        ("Annual Report 2024 > Costs", "Costs\n\nCosts fell."),
        ("Annual Report 2024 > Costs > Travel", "Travel\n\nFewer flights."),
        ("Annual Report 2024 > Appendix", "Appendix\n\nTables."),
    ]


def test_the_title_paragraph_wins_over_the_core_properties_title():
    # Word copies a template's core properties along with it: what the reader sees on the page is the title.
    assert extract(report(core_title="Template v3"), "report.docx").title == "Annual Report 2024"


def test_a_title_styled_paragraph_in_a_table_cell_titles_nothing():
    document = docx.Document()
    table = document.add_table(rows=1, cols=1)
    table.rows[0].cells[0].paragraphs[0].style = document.styles["Title"]
    table.rows[0].cells[0].paragraphs[0].text = "Cell in Title style"
    document.add_paragraph("Body.")
    found = extract(docx_bytes(document), "memo.docx")
    assert (found.title, found.title_heads_trail) == ("memo.docx", False)
    assert [block.text for block in found.blocks] == ["Cell in Title style", "Body."]


def test_text_inside_a_content_control_is_read():
    document = docx.Document()
    document.add_paragraph("Before the control.")
    control = parse_xml(
        f"<w:sdt {nsdecls('w')}><w:sdtPr/><w:sdtContent><w:p><w:r><w:t>Inside the control.</w:t></w:r></w:p>"
        "</w:sdtContent></w:sdt>"
    )
    document.element.body.insert(1, control)
    texts = [block.text for block in extract(docx_bytes(document), "form.docx").blocks]
    assert texts == ["Before the control.", "Inside the control."]


def test_a_password_protected_document_is_unreadable_as_encrypted():
    # Word saves an encrypted document as an OLE compound file, not as a zip package.
    ole = bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 504
    with pytest.raises(Unreadable, match=r"^encrypted or not a \.docx"):
        extract(ole, "locked.docx")


@pytest.mark.parametrize("data", [manual()[:300], b"not a zip at all", b""], ids=["truncated", "text", "empty"])
def test_a_damaged_document_is_unreadable_as_damaged(data):
    with pytest.raises(Unreadable, match=r"^damaged or not a Word document \("):
        extract(data, "broken.docx")
