"""PDF to blocks with PDFium (pypdfium2): text per page in reading order, every block on one page.

PDFium gives a page's text as lines; their geometry (baseline, left edge, font size of the first
character) makes the paragraphs: a new one starts where the gap to the line before grows, the font
size changes, or the line is indented further. Hyphenated line ends come back joined (PDFium marks the
hyphen with U+FFFE, removed here). Headings come from the outline (bookmarks), placed where each entry
points on its page; a PDF without one gets its headings from lines set larger than the body text.
Running heads and feet go: a line of the one or two at the top or bottom of its page, set apart from the
rest by a wide gap, whose words (digits aside: page numbers) come back at the same height on other pages,
where most pages have such a line.

The title: the document information's Title, else the first line of page 1 set larger than the body,
else the file name; the information's Author, Subject, Keywords and dates are the PDF's metadata. A
password-protected PDF, a damaged one and one without any text (scanned pages) are Unreadable with the
reason. A PDF on which PDFium spins is stopped by the per-file time limit of the worker process reading
it (`workers.py`), like any other format.
"""

from __future__ import annotations

import ctypes
import itertools
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium  # type: ignore[import-untyped]  # no type information
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from lancelot_indexer.chunking.chunk import Block, Document
from lancelot_indexer.chunking.metadata import Metadata, pdf_timestamp
from lancelot_indexer.readers.formats import Unreadable

# A line this much larger than the body text is a heading (no outline) or the title.
LARGER = 1.15
# A gap between baselines this many times the usual one starts a paragraph.
PARAGRAPH_GAP = 1.4
# Characters a heading's line has on average, at most: a size used for longer lines is body text.
HEADING_LINE = 60
MAX_HEADING = 160  # characters: a longer "large" line is body text set large (a cover's blurb)
# Running lines: the lines looked at at each end of a page, set apart from the rest by this many usual gaps
# between lines, and the share of pages (of at least RUNNING_PAGES) that must carry repeated lines at a height
# for those lines to go.
EDGE_LINES = 2
EDGE_GAP = 1.5
RUNNING_SHARE = 0.5
RUNNING_PAGES = 3
_DIGITS = re.compile(r"\d+")
_SOFT_HYPHEN = "\ufffe"  # PDFium's mark for a hyphen that split a word at a line's end
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NOT_WORDS = re.compile(r"[\W_]+")
_FILE_TITLE = re.compile(r"(?i)^(untitled|.*\.(dvi|tex|docx?|pdf|ps|indd|qxd|rtf|odt))$")


# An outline entry: the index of the page it points at, the height there (None: the top), its level from 1, its title.
_Entry = tuple[int, float | None, int, str]


@dataclass
class _Line:
    text: str
    x: float
    y: float  # baseline, upwards from the page's bottom
    size: float
    right: float  # where its last character ends
    heading: int = 0  # its level, once known


def extract(data: bytes, file_name: str) -> Document:
    """The title and the blocks of a PDF; Unreadable when it is encrypted, damaged or has no text."""
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise Unreadable(_why(exc)) from exc
    try:
        pages = [_lines(pdf, number) for number in range(len(pdf))]
        outline = _outline(pdf)
        info = pdf.get_metadata_dict(skip_empty=True)  # the document information, read once
    except pdfium.PdfiumError as exc:  # a page it cannot load (a page tree that holds itself)
        raise Unreadable(_why(exc)) from exc
    finally:
        pdf.close()
    if not any(pages):
        what = "no pages" if not pages else "no text layer (scanned pages or images only: run OCR on it first)"
        raise Unreadable(what)
    body = _body_size(pages)
    pages = _without_running(pages, body)
    title = _info_title(info) or _first_large_line(pages[0], body) or file_name
    if outline:
        blocks = _with_outline(pages, outline, body)
    else:
        _mark_large_lines(pages, body)
        blocks = [block for number, lines in enumerate(pages, start=1) for block in _blocks(lines, number, body)]
    return Document(title, blocks, Metadata.of(_properties(info)))


def _why(exc: pdfium.PdfiumError) -> str:
    code = getattr(exc, "err_code", None)
    if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
        return "encrypted: the PDF needs a password to open"
    return f"damaged or not a PDF ({exc})"


def _info_title(info: dict[str, Any]) -> str | None:
    title = " ".join(str(info.get("Title") or "").split())
    return title if title and not _FILE_TITLE.match(title) else None


# The document information kept as the PDF's metadata, by the field each gives (`metadata.py`); its dates as ISO text.
PROPERTIES = {"Author": "author", "Subject": "subject", "Keywords": "keywords"}
DATES = {"CreationDate": "created", "ModDate": "modified"}


def _properties(info: dict[str, Any]) -> dict[str, str]:
    found = {field: str(info[key]) for key, field in PROPERTIES.items() if key in info}
    for key, field in DATES.items():
        if key in info:
            found[field] = pdf_timestamp(str(info[key])) or str(info[key])
    return found


def _lines(pdf: pdfium.PdfDocument, index: int) -> list[_Line]:
    """The page's lines of text, in PDFium's reading order, with where each starts and how large it is."""
    page = pdf[index]
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        text = textpage.get_text_range(0, count) if count > 0 else ""
        located = len(text) == count  # each character of the text is the one of its index
        lines: list[_Line] = []
        x, y = ctypes.c_double(), ctypes.c_double()
        start = 0
        for match in [*_LINE_BREAK.finditer(text), None]:
            end = len(text) if match is None else match.start()
            raw = text[start:end]
            cleaned = " ".join(raw.replace(_SOFT_HYPHEN, "").replace("\x00", "").split())
            if cleaned:
                if located:
                    first = start + len(raw) - len(raw.lstrip())
                    pdfium_c.FPDFText_GetCharOrigin(textpage.raw, first, ctypes.byref(x), ctypes.byref(y))
                    size = pdfium_c.FPDFText_GetFontSize(textpage.raw, first)
                    last = start + len(raw.rstrip()) - 1
                    lines.append(_Line(cleaned, x.value, y.value, round(size, 1), _right_edge(textpage, last)))
                else:
                    lines.append(_Line(cleaned, 0.0, 0.0, 0.0, 0.0))
            if match is not None:
                start = match.end()
        return lines
    finally:
        textpage.close()
        page.close()


def _right_edge(textpage: pdfium.PdfTextPage, index: int) -> float:
    left, right, bottom, top = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    pdfium_c.FPDFText_GetCharBox(
        textpage.raw, index, ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top)
    )
    return right.value


def _outline(pdf: pdfium.PdfDocument) -> list[_Entry]:
    """The outline's entries that point at a page: (page index, top or None, level from 1, title)."""
    entries = []
    for bookmark in pdf.get_toc(max_depth=6):
        title = " ".join(bookmark.get_title().split())
        dest = bookmark.get_dest()
        index = dest.get_index() if dest is not None else None
        if not title or index is None or not 0 <= index < len(pdf):
            continue
        mode, view = dest.get_view()
        top: float | None = None
        if mode == pdfium_c.PDFDEST_VIEW_XYZ and len(view) > 1:
            top = view[1]
        elif mode in (pdfium_c.PDFDEST_VIEW_FITH, pdfium_c.PDFDEST_VIEW_FITBH) and view:
            top = view[0]
        entries.append((index, top or None, bookmark.level + 1, title))
    return entries


def _body_size(pages: list[list[_Line]]) -> float:
    """The font size most of the text is set in."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0]


def _edges(lines: list[_Line], body: float) -> list[_Line]:
    """The lines at the top and the bottom of a page that are set apart from the rest (where running heads and
    feet are): at each end, the first one, or two, followed by a gap of EDGE_GAP usual gaps."""
    by_height = sorted((line for line in lines if line.y), key=lambda line: line.y)  # y 0: PDFium gave no positions
    wide = EDGE_GAP * _usual_gap(lines, body)
    edges: list[_Line] = []
    for end in (by_height, by_height[::-1]):
        for count in range(1, min(EDGE_LINES, len(end) - 1) + 1):
            if abs(end[count].y - end[count - 1].y) > wide:
                edges.extend(end[:count])
                break
    return edges


def _key(line: _Line) -> tuple[int, str]:
    return round(line.y), _DIGITS.sub("0", line.text)


def _running(edges: list[list[_Line]], pages: int) -> set[tuple[int, str]]:
    """(height, words with digits masked) of the edge lines that run across pages: at a height where at least
    RUNNING_SHARE of the pages have an edge line whose words another page has there too."""
    where: dict[tuple[int, str], set[int]] = {}
    for number, lines in enumerate(edges):
        for line in lines:
            where.setdefault(_key(line), set()).add(number)
    repeated = {key: on for key, on in where.items() if len(on) > 1}
    pages_at: dict[int, set[int]] = {}
    for (height, _), on in repeated.items():
        pages_at.setdefault(height, set()).update(on)
    enough = max(RUNNING_PAGES, RUNNING_SHARE * pages)
    return {key for key in repeated if len(pages_at[key[0]]) >= enough}


def _without_running(pages: list[list[_Line]], body: float) -> list[list[_Line]]:
    """The pages without their running heads, feet and page numbers."""
    if len(pages) < RUNNING_PAGES:
        return pages
    edges = [_edges(lines, body) for lines in pages]
    running = _running(edges, len(pages))
    if not running:
        return pages
    dropped = [{id(line) for line in lines if _key(line) in running} for lines in edges]
    return [[line for line in lines if id(line) not in gone] for lines, gone in zip(pages, dropped, strict=True)]


def _first_large_line(lines: list[_Line], body: float) -> str | None:
    """Page 1's first run of lines in its largest size, when that is larger than the body text."""
    if not lines:
        return None
    largest = max(line.size for line in lines)
    if largest <= body * LARGER:
        return None
    start = next(number for number, line in enumerate(lines) if line.size == largest)
    run = [lines[start].text]
    for line in lines[start + 1 :]:
        if line.size != largest:
            break
        run.append(line.text)
    title = " ".join(run)
    return title if len(title) <= MAX_HEADING * 2 else None


def _mark_large_lines(pages: list[list[_Line]], body: float) -> None:
    """Headings without an outline: short lines set larger than the body, levels by size (largest first)."""
    large = [
        line
        for lines in pages
        for line in lines
        if line.size > body * LARGER and len(line.text) <= MAX_HEADING and not line.text.isdigit()
    ]
    chars: Counter[float] = Counter()
    for line in large:
        chars[line.size] += len(line.text)
    lines_of = Counter(line.size for line in large)
    # A size with many long lines is text set larger than the body (the body was code), not headings.
    sizes = sorted((size for size in chars if chars[size] / lines_of[size] <= HEADING_LINE), reverse=True)
    levels = {size: level for level, size in enumerate(sizes[:6], 1)}
    for line in large:
        line.heading = levels.get(line.size, 0)


def _with_outline(pages: list[list[_Line]], outline: list[_Entry], body: float) -> list[Block]:
    """Blocks with the outline's entries as headings: the line an entry names becomes its heading; an entry
    whose line is not found is a heading of its own before the line it points at."""
    inserted: dict[tuple[int, int], list[Block]] = {}
    for index, top, level, title in outline:
        lines = pages[index]
        at = _pointed(lines, top)
        wanted = _NOT_WORDS.sub("", title).casefold()
        for near in range(at, min(at + 3, len(lines))):
            # The entry's own line, maybe with its number before it ("2.1 Overview" for "Overview").
            words = _NOT_WORDS.sub("", lines[near].text).casefold()
            if wanted and wanted in words and len(words) <= len(wanted) + 8 and not lines[near].heading:
                lines[near].heading = min(level, 6)
                break
        else:
            inserted.setdefault((index, at), []).append(Block(title, level=min(level, 6), page=index + 1))
    blocks: list[Block] = []
    for index, lines in enumerate(pages):
        split = sorted(at for page, at in inserted if page == index)
        start = 0
        for at in [*split, len(lines)]:
            blocks.extend(_blocks(lines[start:at], index + 1, body))
            blocks.extend(inserted.get((index, at), []))
            start = at
    return blocks


def _pointed(lines: list[_Line], top: float | None) -> int:
    """The first line at or below `top` (the line an outline entry points at); 0 without a position."""
    if top is None:
        return 0
    return next((number for number, line in enumerate(lines) if line.y <= top + 1.0), len(lines))


def _blocks(lines: list[_Line], page: int, body: float) -> list[Block]:
    """One page's lines as headings and paragraphs."""
    blocks: list[Block] = []
    pitch = _usual_gap(lines, body)
    margin = max((line.right for line in lines), default=0.0)
    paragraph: list[str] = []
    previous: _Line | None = None

    def close() -> None:
        if paragraph:
            blocks.append(Block("\n".join(paragraph), page=page))
            paragraph.clear()

    for line in lines:
        if line.heading:
            close()
            if blocks and blocks[-1].level == line.heading and previous is not None and previous.heading:
                merged = blocks.pop().text + " " + line.text  # a heading set on two lines
                blocks.append(Block(merged, level=line.heading, page=page))
            else:
                blocks.append(Block(line.text, level=line.heading, page=page))
        else:
            if previous is not None and _starts_paragraph(previous, line, pitch, margin):
                close()
            paragraph.append(line.text)
        previous = line
    close()
    return blocks


def _usual_gap(lines: list[_Line], body: float) -> float:
    """The usual gap between the baselines of a paragraph's lines: the page's median, but no more than a line
    and a half of the body text (a page of few lines has few gaps to tell by)."""
    gaps = [a.y - b.y for a, b in itertools.pairwise(lines) if a.size == b.size and 0 < a.y - b.y < 3 * a.size]
    return min(statistics.median(gaps), 1.5 * body) if gaps else 1.5 * body


def _starts_paragraph(previous: _Line, line: _Line, pitch: float, margin: float) -> bool:
    if previous.heading or line.size == 0.0:
        return bool(previous.heading)
    gap = previous.y - line.y
    if abs(line.size - previous.size) > 0.1 * previous.size or gap <= 0 or (pitch and gap > pitch * PARAGRAPH_GAP):
        return True
    # An indented first line after a line that stopped short of the margin (a hanging indent, as in a
    # description list, follows a full line).
    return line.x > previous.x + 0.8 * line.size and previous.right < margin - 1.5 * line.size
