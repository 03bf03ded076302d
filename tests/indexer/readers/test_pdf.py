"""The PDF reader over PDFs made in the tests (tests/support/documents.py) and, where installed, real ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.documents import Entry, Line, make_pdf

from lancelot_indexer.chunking.chunk import chunk
from lancelot_indexer.readers.formats import Unreadable
from lancelot_indexer.readers.pdf import extract

TWO_PAGES = [
    [
        Line("Installing the tool", 18, 720),
        Line("The first paragraph starts here and goes on", 11, 690),
        Line("over a second line of the same paragraph.", 11, 677),
        Line("A second paragraph, its first line indented.", 11, 664, x=90),
        Line("1", 9, 60, x=300),
    ],
    [
        Line("Configuring it", 18, 720),
        Line("Settings are read from the environment.", 11, 690),
        Line("After a wider gap, a new paragraph.", 11, 650),
    ],
]


def blocks_of(data: bytes, name: str = "manual.pdf"):
    return extract(data, name).blocks


def test_text_comes_page_by_page_in_paragraphs_each_on_its_page():
    found = [(block.page, block.level, block.text) for block in blocks_of(make_pdf(TWO_PAGES))]
    assert found == [
        (1, 1, "Installing the tool"),
        (1, 0, "The first paragraph starts here and goes on\nover a second line of the same paragraph."),
        (1, 0, "A second paragraph, its first line indented."),
        (1, 0, "1"),
        (2, 1, "Configuring it"),
        (2, 0, "Settings are read from the environment."),
        (2, 0, "After a wider gap, a new paragraph."),
    ]


def test_a_passage_never_spans_two_pages_however_large_the_chunks():
    pieces = chunk(blocks_of(make_pdf(TWO_PAGES)), 100_000)
    assert [(piece.page, piece.heading) for piece in pieces] == [(1, "Installing the tool"), (2, "Configuring it")]
    assert "Settings" not in pieces[0].text and "Installing" not in pieces[1].text


def test_the_title_is_the_documents_title_else_the_first_large_line_else_the_file_name():
    assert extract(make_pdf(TWO_PAGES, title="The Tool Manual"), "m.pdf").title == "The Tool Manual"
    assert extract(make_pdf(TWO_PAGES), "m.pdf").title == "Installing the tool"
    # A Title that is only a file name (what many converters write) is no title.
    assert extract(make_pdf(TWO_PAGES, title="draft3.dvi"), "m.pdf").title == "Installing the tool"
    flat = [[Line("All the same size", 11, 700), Line("and no title line", 11, 687)]]
    assert extract(make_pdf(flat), "notes.pdf").title == "notes.pdf"


def test_the_outline_makes_the_heading_trail_where_its_entries_point():
    outline = [
        Entry("Installing the tool", 0, 735, (Entry("From source", 0, 670),)),
        Entry("Configuring it", 1, 735),
    ]
    pages = [
        [
            Line("Installing the tool", 18, 720),
            Line("Packages exist for most systems.", 11, 690),
            Line("From source", 13, 660),
            Line("Run make and then make install.", 11, 640),
        ],
        TWO_PAGES[1],
    ]
    pieces = chunk(blocks_of(make_pdf(pages, outline=outline)), 1000)
    assert [(piece.page, piece.heading) for piece in pieces] == [
        (1, "Installing the tool"),
        (1, "Installing the tool > From source"),
        (2, "Configuring it"),
    ]
    assert pieces[1].text == "From source\n\nRun make and then make install."


def test_an_outline_entry_whose_line_is_not_on_the_page_is_a_heading_where_it_points():
    pages = [[Line("Body text only.", 11, 700), Line("More body text.", 11, 600)]]
    blocks = blocks_of(make_pdf(pages, outline=[Entry("Second half", 0, 650)]))
    assert [(block.level, block.text) for block in blocks] == [
        (0, "Body text only."),
        (1, "Second half"),
        (0, "More body text."),
    ]


def test_without_an_outline_larger_lines_are_headings_by_size():
    pages = [
        [
            Line("Chapter", 20, 740),
            Line("Section", 15, 710),
            Line("Body text of the section.", 11, 690),
            Line("Another section", 15, 660),
            Line("More body text, the bulk of the page.", 11, 640),
        ]
    ]
    pieces = chunk(blocks_of(make_pdf(pages)), 1000)
    assert [piece.heading for piece in pieces] == ["Chapter", "Chapter > Section", "Chapter > Another section"]
    assert [piece.text for piece in pieces][1] == "Section\n\nBody text of the section."


def test_a_word_hyphenated_at_a_lines_end_is_joined():
    pages = [[Line("The configura-", 11, 700), Line("tion file is read first.", 11, 687)]]
    (block,) = blocks_of(make_pdf(pages))
    assert "configuration" in block.text.replace("\n", "")


def test_a_pdf_that_needs_a_password_is_unreadable_as_encrypted():
    data = make_pdf(TWO_PAGES, title="Secret", password="open sesame")
    with pytest.raises(Unreadable, match=r"^encrypted: the PDF needs a password to open$"):
        extract(data, "locked.pdf")


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7\nthis is no PDF at all",
        make_pdf(TWO_PAGES)[:400],  # cut short: the objects, the cross-reference table and the trailer are gone
        b"",
    ],
    ids=["garbage", "truncated", "empty"],
)
def test_a_damaged_pdf_is_unreadable_as_damaged(data):
    with pytest.raises(Unreadable, match=r"^damaged or not a PDF \(.*PDFium"):
        extract(data, "broken.pdf")


def test_a_scanned_pdf_without_a_text_layer_is_unreadable_with_the_reason():
    with pytest.raises(Unreadable, match="no text layer"):
        extract(make_pdf([[], []], images=True), "scan.pdf")


def test_pages_without_text_are_passed_over_and_the_others_keep_their_numbers():
    pages = [[], [Line("Only the second page has text.", 11, 700)]]
    assert [(block.page, block.text) for block in blocks_of(make_pdf(pages))] == [(2, "Only the second page has text.")]


TEXLIVE = Path("/usr/share/doc/texlive-doc/latex/base")


@pytest.mark.parametrize("name", ["usrguide.pdf", "ltnews30.pdf", "lppl.pdf"])
def test_real_latex_manuals_give_titled_text_on_every_page(name):
    path = TEXLIVE / name
    if not path.exists():
        pytest.skip(f"{path} is not installed (Debian's texlive-latex-base-doc)")
    import pypdfium2 as pdfium

    pages = len(pdfium.PdfDocument(path.read_bytes()))
    document = extract(path.read_bytes(), name)
    assert document.title not in ("", name)
    assert {block.page for block in document.blocks} == set(range(1, pages + 1))
    pieces = chunk(document.blocks, 1200)
    assert all(piece.page is not None for piece in pieces)
    assert sum(1 for piece in pieces if piece.heading) >= len(pieces) // 2
    assert "\ufffe" not in "".join(piece.text for piece in pieces)
