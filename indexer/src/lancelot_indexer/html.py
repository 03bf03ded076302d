"""HTML to blocks with selectolax (Lexbor, an HTML5 parser): text only, block elements as breaks.

Lexbor does the parsing and entity decoding in C; Python only inserts markers around block elements
and turns the marked text into paragraphs, so a page costs a handful of calls rather than one per node.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from lancelot_indexer.chunk import Block, Document

REMOVED = ["script", "style", "noscript", "template", "svg"]
PARAGRAPH_ELEMENTS = (
    "address, article, aside, blockquote, body, caption, dd, details, dialog, div, dl, dt, fieldset, "
    "figcaption, figure, footer, form, header, hr, li, main, nav, ol, p, section, summary, table, "
    "tbody, tfoot, thead, tr, ul"
)
LINE_ELEMENTS = "br"
CELL_ELEMENTS = "td, th"

# Private-use characters mark the breaks until the whitespace has been collapsed.
_PARAGRAPH = "\ue000"
_LINE = "\ue001"
_PRE = "\ue002"
_PRE_NEWLINE = "\ue003"
_PRE_SPACE = "\ue004"
_PRE_TAB = "\ue005"
_HEADING = {level: chr(0xE010 + level) for level in range(1, 7)}
_HEADING_LEVEL = {marker: level for level, marker in _HEADING.items()}

_PRE_RESTORE = str.maketrans({_PRE_NEWLINE: "\n", _PRE_SPACE: " ", _PRE_TAB: "\t"})
_PRE_PROTECT = str.maketrans({"\n": _PRE_NEWLINE, " ": _PRE_SPACE, "\t": _PRE_TAB, "\r": ""})


def _collapse(text: str) -> str:
    return " ".join(text.split())


def extract(html: str, file_name: str) -> Document:
    """The title and the text blocks of an HTML page; never raises on malformed markup."""
    tree = LexborHTMLParser(html)
    tree.strip_tags(REMOVED)
    title_node = tree.css_first("title")
    title = _collapse(title_node.text(deep=True)) if title_node is not None else ""
    if not title:
        h1 = tree.css_first("h1")
        title = _collapse(h1.text(deep=True)) if h1 is not None else ""
    body = tree.body or tree.root
    if body is None:
        return Document(title or file_name, [])
    for pre in body.css("pre"):
        pre.replace_with(_PARAGRAPH + _PRE + pre.text(deep=True).translate(_PRE_PROTECT) + _PARAGRAPH)
    for level in range(1, 7):
        for heading in body.css(f"h{level}"):
            heading.insert_before(_PARAGRAPH + _HEADING[level])
            heading.insert_after(_PARAGRAPH)
    for node in body.css(PARAGRAPH_ELEMENTS):
        node.insert_before(_PARAGRAPH)
        node.insert_after(_PARAGRAPH)
    for node in body.css(LINE_ELEMENTS):
        node.insert_after(_LINE)
    for node in body.css(CELL_ELEMENTS):
        node.insert_after(" ")
    return Document(title or file_name, _blocks(body.text(deep=True)))


def _blocks(marked: str) -> list[Block]:
    # str.split() collapses whitespace far faster than a regular expression; the markers are not whitespace.
    text = " ".join(marked.split())
    blocks: list[Block] = []
    for raw in text.split(_PARAGRAPH):
        part = raw.strip(" ")
        if not part:
            continue
        first = part[0]
        if first == _PRE:
            code = part[1:].translate(_PRE_RESTORE).strip("\n")
            if code.strip():
                blocks.append(Block(code, whole=True))
            continue
        level = _HEADING_LEVEL.get(first, 0)
        if level:
            part = part[1:]
        paragraph = "\n".join(line for line in (piece.strip(" ") for piece in part.split(_LINE)) if line)
        if paragraph:
            blocks.append(Block(paragraph, level=level))
    return blocks
