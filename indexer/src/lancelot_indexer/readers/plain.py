"""Plain text to blocks: paragraphs are separated by blank lines; the title is the file name."""

from __future__ import annotations

from lancelot_indexer.chunking.chunk import Document, paragraphs


def extract(text: str, file_name: str) -> Document:
    return Document(file_name, paragraphs(text))
