"""Word (.docx) to blocks with python-docx: paragraphs, headings, lists and tables, in document order.

Named `word` so that it does not shadow the `docx` package. Headings are the paragraphs in Word's
built-in styles Heading 1–9 (their names are English in the file whatever the language Word shows them
in), and they make the heading trail. The first paragraph in the Title style titles the document and tops
every passage's heading trail, in no passage's text (a passage of its own, it matched every search for a
word of the title); a later one is a heading like Heading 1. A run of list paragraphs is one block, an item a
line ("- item", indented by level); a table is one block, a row a line with its cells separated by
" | " (a merged cell once). Content controls are read through; headers, footers and comments are not
the document's text and are left out.

The title: the Title paragraph (what the reader sees), else the core properties' title (often a template's,
left as it was), else the first heading, else the file name. The core properties'
author, subject, comments, keywords, category and dates are its metadata.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

import docx
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import etree  # type: ignore[import-untyped]  # no stubs in the dev environment

from lancelot_indexer.chunking.chunk import Block, Document
from lancelot_indexer.chunking.metadata import Metadata
from lancelot_indexer.readers.formats import Unreadable

# An OLE compound file: what Word writes for a password-protected document (and what an old .doc is).
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_P, _TBL, _SDT, _SDT_CONTENT, _NUM_PR, _ILVL = (
    qn("w:p"), qn("w:tbl"), qn("w:sdt"), qn("w:sdtContent"), qn("w:numPr"), qn("w:ilvl")
)  # fmt: skip


def extract(data: bytes, file_name: str) -> Document:
    """The title and the blocks of a .docx file; Unreadable when it is encrypted or damaged."""
    if data.startswith(_OLE):
        raise Unreadable("encrypted or not a .docx: a password-protected document (or an old .doc renamed)")
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, etree.XMLSyntaxError) as exc:
        raise Unreadable(f"damaged or not a Word document ({type(exc).__name__}: {exc})") from exc
    reader = _Reader(document)
    blocks = reader.blocks(document.element.body, document)
    core = " ".join((document.core_properties.title or "").split())
    title = reader.title or core or next((block.text for block in blocks if block.level), None) or file_name
    metadata = Metadata.of(_properties(document.core_properties))
    return Document(title, blocks, metadata, title_heads_trail=reader.title is not None)


# The core properties kept as the document's metadata, by the field each gives (`metadata.py`).
PROPERTIES = {
    "author": "author", "subject": "subject", "comments": "description", "keywords": "keywords",
    "category": "category", "created": "created", "modified": "modified",
}  # fmt: skip


def _properties(core: Any) -> dict[str, Any]:
    """The properties that are set; python-docx reads a date it cannot parse as None."""
    values = {field: getattr(core, name, None) for name, field in PROPERTIES.items()}
    return {field: value for field, value in values.items() if value not in (None, "")}


def _items(parent: Any, owner: Any) -> Iterator[Paragraph | Table]:
    """The paragraphs and tables under `parent`, in order, content controls read through."""
    for child in parent.iterchildren():
        if child.tag == _P:
            yield Paragraph(child, owner)
        elif child.tag == _TBL:
            yield Table(child, owner)
        elif child.tag == _SDT:
            content = child.find(_SDT_CONTENT)
            if content is not None:
                yield from _items(content, owner)


def _style_names(document: Any) -> tuple[dict[str, str], str]:
    """The document's paragraph style names by style id, and the default style's name. Looked up once: python-docx
    finds a paragraph's style by scanning every style of the document (9 times our reader's own time)."""
    names = {style.style_id: style.name or "" for style in document.styles if style.type == WD_STYLE_TYPE.PARAGRAPH}
    default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
    return names, (default.name or "") if default is not None else ""


def _level(style: str) -> int:
    """The heading level of a paragraph in the Title or a Heading style (Title: 1, Heading N: N), else 0."""
    name = style.casefold()
    if name == "title":
        return 1
    number = name.removeprefix("heading ")
    return min(int(number), 6) if number != name and number.isdigit() else 0


def _list_depth(paragraph: Paragraph, style: str) -> int | None:
    """How deep a list item is (0: top), or None for a paragraph that is no list item."""
    properties = paragraph._p.pPr
    numbering = properties.find(_NUM_PR) if properties is not None else None
    if numbering is None:
        # A list style ("List Bullet", "List Number 2"): its number, if any, is the depth from 1.
        if not style.startswith("List"):
            return None
        last = style.rsplit(" ", 1)[-1]
        return int(last) - 1 if last.isdigit() and int(last) > 0 else 0
    level = numbering.find(_ILVL)
    value = level.get(qn("w:val")) if level is not None else None
    return int(value) if value is not None and value.isdigit() else 0


class _Reader:
    def __init__(self, document: Any) -> None:
        self.names, self.default = _style_names(document)
        self.body = document.element.body
        self.title: str | None = None  # the first Title paragraph's text, once met

    def style(self, paragraph: Paragraph) -> str:
        style_id = paragraph._p.style
        return self.names.get(style_id, self.default) if style_id is not None else self.default

    def row(self, row: Any) -> str:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell comes once for each grid column it spans
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(" ".join(block.text.split()) for block in self.blocks(cell._tc, cell)))
        return " | ".join(cells).strip(" |")

    def blocks(self, parent: Any, owner: Any) -> list[Block]:
        blocks: list[Block] = []
        items: list[str] = []  # the open list's lines

        def close_list() -> None:
            if items:
                blocks.append(Block("\n".join(items)))
                items.clear()

        for item in _items(parent, owner):
            if isinstance(item, Table):
                close_list()
                rows = [line for line in (self.row(row) for row in item.rows) if line]
                if rows:
                    blocks.append(Block("\n".join(rows)))
                continue
            text = item.text.strip()
            if not text:
                continue
            style = self.style(item)
            level = _level(style)
            if self.title is None and parent is self.body and style.casefold() == "title":
                self.title = " ".join(text.split())
                continue
            depth = None if level else _list_depth(item, style)
            if depth is not None:
                items.append("  " * depth + "- " + " ".join(text.split()))
                continue
            close_list()
            blocks.append(Block(" ".join(text.split()) if level else text, level=level))
        close_list()
        return blocks
