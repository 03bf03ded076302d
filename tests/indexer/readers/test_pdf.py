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


def manual_pages(count: int, head: bool = True) -> list[list[Line]]:
    """`count` pages of body text under a running head (even pages: the manual's name on the left; odd pages: the
    chapter's on the right) and above a running foot with the page number."""
    pages = []
    for number in range(1, count + 1):
        lines = [
            Line(f"Body text of page {number}, the first line of its paragraph,", 11, 700),
            Line("and the paragraph's second line.", 11, 687),
        ]
        if head:
            lines.insert(0, Line("The Tool Manual" if number % 2 == 0 else "Chapter 1. Installing", 9, 760))
        lines.append(Line(f"Page {number} of {count}", 9, 40, x=280 if number % 2 else 72))
        pages.append(lines)
    return pages


def texts(data: bytes) -> list[str]:
    return [block.text for block in blocks_of(data)]


def test_running_heads_feet_and_page_numbers_at_the_same_place_on_most_pages_are_dropped():
    assert texts(make_pdf(manual_pages(5))) == [
        f"Body text of page {number}, the first line of its paragraph,\nand the paragraph's second line."
        for number in range(1, 6)
    ]


def test_a_line_where_the_head_runs_elsewhere_stays_when_its_words_are_its_own():
    pages = manual_pages(6)
    pages[2][0] = Line("A figure caption set high on the page", 9, 760)  # page 3: no head, other words there
    found = texts(make_pdf(pages))
    assert "A figure caption set high on the page" in found
    assert not any("Tool Manual" in text or "Chapter 1." in text or "Page " in text for text in found)


def test_lines_repeated_on_few_pages_and_short_documents_keep_their_edges():
    # Two pages: too few to tell running lines from text.
    assert "Page 2 of 2" in texts(make_pdf(manual_pages(2)))
    # The same words at the same place on 2 of 6 pages (a repeated remark, not a running foot) stay.
    pages = manual_pages(6, head=False)
    for lines in pages[2:]:
        lines.pop()  # pages 3 to 6 have no foot
    found = texts(make_pdf(pages))
    assert "Page 1 of 6" in found and "Page 2 of 6" in found


TEXLIVE = Path("/usr/share/doc/texlive-doc/latex/base")


def test_real_latex_manuals_lose_their_page_numbers_and_running_heads():
    usrguide, tlc2 = TEXLIVE / "usrguide.pdf", TEXLIVE / "tlc2.pdf"
    if not (usrguide.exists() and tlc2.exists()):
        pytest.skip(f"{TEXLIVE} lacks usrguide.pdf or tlc2.pdf (Debian's texlive-latex-base-doc)")
    # Each page's number was the last block of its page: none is left.
    assert not any(block.text == str(block.page) for block in extract(usrguide.read_bytes(), "usrguide.pdf").blocks)
    # The errata's running head, on 7 of its 8 pages (the first is titled "Errata list for...").
    document = extract(tlc2.read_bytes(), "tlc2.pdf")
    assert document.title.startswith("Errata list for The LATEX Companion")
    assert not any("Errata for The LATEX Companion" in block.text for block in document.blocks)
