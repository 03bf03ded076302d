"""Documents as blocks, and blocks packed into chunks of about `size` characters.

A chunk never spans two sections: a heading starts a new chunk, and every chunk records the trail of
headings it sits under ("Install > Linux"). A block marked `whole` (a code fence, a `pre`) that fits in
one chunk is never split; a longer paragraph is cut at the last whitespace before the limit. A chunk
records the lines its text spans in the source file (where the format has lines), the anchor of the
block it starts in (HTML) and its page (PDF): a chunk never spans two pages, so that a hit names one page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from lancelot_indexer.chunking.metadata import Metadata

HEADING_SEPARATOR = " > "
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")


class Block(NamedTuple):
    """A paragraph, a heading (`level` 1–6) or a block to keep whole (`whole`).

    `lines`: the first and last line (from 1) of the block in its source file, where the format has lines
    to point at; `anchor`: the `id` of the nearest element that starts at or before it (HTML); `page`: the
    page it is on, from 1 (PDF).
    A NamedTuple rather than a frozen dataclass: one is made per paragraph of every page, twice as fast.
    """

    text: str
    level: int = 0
    whole: bool = False
    lines: tuple[int, int] | None = None
    anchor: str | None = None
    page: int | None = None


@dataclass(frozen=True)
class Document:
    """A document as its reader found it: its title, its blocks, and what it says of itself (`metadata.py`).

    `title_heads_trail`: the title tops every passage's heading trail (a Word document's Title paragraph, which
    is then in no passage's text). `generated`: the generator and the kind of page (documents/generated.py's
    names), when the reader knows it as one a documentation generator made (a Sphinx table of contents).
    """

    title: str
    blocks: list[Block] = field(default_factory=list)
    metadata: Metadata = field(default_factory=Metadata)
    title_heads_trail: bool = False
    generated: tuple[str, str] | None = None


@dataclass(frozen=True)
class Chunk:
    text: str
    heading: str
    line_start: int | None = None  # first and last line of the chunk's text in the source file
    line_end: int | None = None
    anchor: str | None = None  # the anchor of the block the chunk starts in
    page: int | None = None  # the page all of its text is on


def paragraphs(text: str) -> list[Block]:
    """Plain text as blocks: paragraphs are separated by blank lines."""
    blocks: list[Block] = []
    start, line = 0, 1  # `line`: the line `start` is on
    for match in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = len(text) if match is None else match.start()
        part = text[start:end]
        stripped = part.strip()
        if stripped:
            first = line + text.count("\n", start, end - len(part.lstrip()))
            blocks.append(Block(stripped, lines=(first, first + stripped.count("\n"))))
        if match is not None:
            line += text.count("\n", start, match.end())
            start = match.end()
    return blocks


def pieces(text: str, size: int, *, whole: bool = False) -> Iterator[tuple[int, str]]:
    """`text` in pieces of at most `size` characters, cut at the last whitespace before the limit.

    Each piece comes with its offset in `text`, where a caller finds which line it starts on.
    """
    start, end_of_text = 0, len(text)
    while start < end_of_text:
        if end_of_text - start <= size:
            cut = end_of_text
        else:
            limit = start + size
            cut = text.rfind("\n", start + 1, limit + 1) if whole else -1
            if cut <= start:
                cut = max(text.rfind(" ", start + 1, limit + 1), text.rfind("\n", start + 1, limit + 1))
            if cut <= start:
                cut = limit  # one unbroken word longer than a chunk: no better place to cut
        part = text[start:cut]
        piece = part.strip()
        if piece:
            yield cut - len(part.lstrip()), piece
        start = cut


def _located(block: Block, size: int) -> Iterator[tuple[str, tuple[int, int] | None]]:
    """The pieces of a block longer than `size`, each with the first and last line of its source it spans.

    The block's text keeps the line breaks of its source, so a piece starts as many lines below the
    block's first line as there are line breaks before it.
    """
    text, lines = block.text, block.lines
    line, seen = (lines[0] if lines else 0), 0
    for offset, piece in pieces(text, size, whole=block.whole):
        if lines is None:
            yield piece, None
            continue
        line += text.count("\n", seen, offset)
        seen = offset
        yield piece, (line, line + piece.count("\n"))


class _Packer:
    def __init__(self, size: int, top: str) -> None:
        self.size = size
        self.parts: list[str] = []
        self.length = 0
        self.top = [top] if top else []
        self.trail: list[tuple[int, str]] = []
        self.heading = top
        self.line_start: int | None = None
        self.line_end: int | None = None
        self.anchor: str | None = None
        self.page: int | None = None
        self.chunks: list[Chunk] = []

    def flush(self) -> None:
        if self.parts:
            text = "\n\n".join(self.parts)
            self.chunks.append(Chunk(text, self.heading, self.line_start, self.line_end, self.anchor, self.page))
        self.parts, self.length = [], 0
        self.heading = HEADING_SEPARATOR.join([*self.top, *(text for _, text in self.trail)])

    def add(self, piece: str, lines: tuple[int, int] | None, anchor: str | None, page: int | None) -> None:
        extra = len(piece) + (2 if self.parts else 0)
        if self.parts and (self.length + extra > self.size or page != self.page):
            self.flush()
            extra = len(piece)
        if not self.parts:
            self.line_start, self.anchor, self.page = (lines[0] if lines else None), anchor, page
        self.line_end = lines[1] if lines else None
        self.parts.append(piece)
        self.length += extra

    def enter(self, block: Block) -> None:
        """A heading closes the section before it and opens its own."""
        while self.trail and self.trail[-1][0] >= block.level:
            self.trail.pop()
        self.trail.append((block.level, " ".join(block.text.split())))
        self.flush()


def chunk(blocks: list[Block], size: int, top: str = "") -> list[Chunk]:
    """Pack `blocks` into chunks of at most about `size` characters; no chunk is empty. `top`, when given, tops
    every chunk's heading trail."""
    packer = _Packer(size, " ".join(top.split()))
    for block in blocks:
        if block.level:
            packer.enter(block)
        if len(block.text) <= size:  # most blocks: one piece with the block's lines (a setext underline too)
            piece = block.text if block.whole else block.text.strip()
            if piece:
                packer.add(piece, block.lines, block.anchor, block.page)
            continue
        for piece, lines in _located(block, size):
            packer.add(piece, lines, block.anchor, block.page)
    packer.flush()
    return packer.chunks
