"""Documents as blocks, and blocks packed into chunks of about `size` characters.

A chunk never spans two sections: a heading starts a new chunk, and every chunk records the trail of
headings it sits under ("Install > Linux"). A block marked `whole` (a code fence, a `pre`) that fits in
one chunk is never split; a longer paragraph is cut at the last whitespace before the limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

HEADING_SEPARATOR = " > "
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")


@dataclass(frozen=True)
class Block:
    """A paragraph, a heading (`level` 1–6) or a block to keep whole (`whole`).

    `lines`: the first and last line (from 1) of the block in its source file, where the format has lines
    to point at; `anchor`: the `id` of the nearest element that starts at or before it (HTML).
    """

    text: str
    level: int = 0
    whole: bool = False
    lines: tuple[int, int] | None = None
    anchor: str | None = None


@dataclass(frozen=True)
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)


@dataclass(frozen=True)
class Chunk:
    text: str
    heading: str
    line_start: int | None = None  # first and last line of the chunk's text in the source file
    line_end: int | None = None
    anchor: str | None = None  # the anchor of the block the chunk starts in


def paragraphs(text: str) -> list[Block]:
    """Plain text as blocks: paragraphs are separated by blank lines."""
    return [Block(part.strip()) for part in _PARAGRAPH_BREAK.split(text) if part.strip()]


def pieces(text: str, size: int, *, whole: bool = False) -> Iterator[str]:
    """`text` in pieces of at most `size` characters, cut at the last whitespace before the limit."""
    start, end_of_text = 0, len(text)
    while end_of_text - start > size:
        limit = start + size
        cut = text.rfind("\n", start + 1, limit + 1) if whole else -1
        if cut <= start:
            cut = max(text.rfind(" ", start + 1, limit + 1), text.rfind("\n", start + 1, limit + 1))
        if cut <= start:
            cut = limit  # one unbroken word longer than a chunk: no better place to cut
        piece = text[start:cut].strip()
        if piece:
            yield piece
        start = cut
    tail = text[start:].strip()
    if tail:
        yield tail


class _Packer:
    def __init__(self, size: int) -> None:
        self.size = size
        self.parts: list[str] = []
        self.length = 0
        self.trail: list[tuple[int, str]] = []
        self.heading = ""
        self.chunks: list[Chunk] = []

    def flush(self) -> None:
        if self.parts:
            self.chunks.append(Chunk("\n\n".join(self.parts), self.heading))
        self.parts, self.length = [], 0
        self.heading = HEADING_SEPARATOR.join(text for _, text in self.trail)

    def add(self, piece: str) -> None:
        extra = len(piece) + (2 if self.parts else 0)
        if self.parts and self.length + extra > self.size:
            self.flush()
            extra = len(piece)
        self.parts.append(piece)
        self.length += extra

    def enter(self, block: Block) -> None:
        """A heading closes the section before it and opens its own."""
        while self.trail and self.trail[-1][0] >= block.level:
            self.trail.pop()
        self.trail.append((block.level, " ".join(block.text.split())))
        self.flush()


def chunk(blocks: list[Block], size: int) -> list[Chunk]:
    """Pack `blocks` into chunks of at most about `size` characters; no chunk is empty."""
    packer = _Packer(size)
    for block in blocks:
        if block.level:
            packer.enter(block)
        if block.whole and len(block.text) <= size:
            packer.add(block.text)
            continue
        for piece in pieces(block.text, size, whole=block.whole):
            packer.add(piece)
    packer.flush()
    return packer.chunks
