"""Which reader reads a document, by its suffix: one line a format.

    FORMATS[".pdf"] -> Format("lancelot_indexer.readers.pdf", binary=True, extra="pdf", library="pypdfium2")
    extract(found_path, data) -> Document     # raises Unreadable with the reason a file is skipped

Every reader module has `extract(content, file_name) -> Document`: decoded text for a text format, the
file's bytes for a binary one (PDF, Word). A reader is imported when the first file of its kind is met,
in the worker process that reads it, never by the CLI: Markdown's parser takes a tenth of a second to
import, PDFium and lxml more. A format whose library is an optional extra that is not installed costs
its files only: each is skipped with the command that installs the extra, and the run goes on.

A format is known by its file name's last suffix, or its last two (`.rst.txt`: Sphinx's copies of its reST
sources).
"""

from __future__ import annotations

import importlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lancelot_indexer.chunking.chunk import Document


class Unreadable(Exception):
    """A file that is skipped, with the reason as its message (encrypted, damaged, no text, no library...)."""


@dataclass(frozen=True)
class Format:
    """`module`: the reader; `binary`: it reads bytes, not decoded text; `extra`: the `lancelot-indexer[extra]`
    that installs its `library` (None: always installed)."""

    module: str
    binary: bool = False
    extra: str | None = None
    library: str | None = None
    kind: str = ""  # what a file of this format is called in a reason ("a PDF")


PLAIN = Format("lancelot_indexer.readers.plain")
FORMATS: dict[str, Format] = {
    ".md": Format("lancelot_indexer.readers.markdown"),
    ".markdown": Format("lancelot_indexer.readers.markdown"),
    ".txt": PLAIN,
    ".html": Format("lancelot_indexer.readers.html"),
    ".htm": Format("lancelot_indexer.readers.html"),
    ".rst": Format("lancelot_indexer.readers.rst"),
    ".rst.txt": Format("lancelot_indexer.readers.rst"),
    ".pdf": Format("lancelot_indexer.readers.pdf", binary=True, extra="pdf", library="pypdfium2", kind="a PDF"),
    ".docx": Format("lancelot_indexer.readers.word", binary=True, extra="docx", library="docx", kind="a Word document"),
}
SUFFIXES = frozenset(FORMATS)
# The last suffix of every format's (a `.rst.txt` is a `.txt`): the names the walk takes for documents.
ENDINGS = tuple(dict.fromkeys("." + suffix.rsplit(".", 1)[1] for suffix in FORMATS))


def suffix_of(name: str, known: Collection[str] = SUFFIXES) -> str:
    """The suffix of file `name` that names its format among `known`: its last two (`.rst.txt`) when they do,
    else its last one, lower-cased."""
    lowered = name.lower()
    last = Path(lowered).suffix
    two = Path(lowered.removesuffix(last)).suffix + last if last else ""
    return two if len(two) > len(last) and two in known else last


def format_of(path: Path) -> Format:
    return FORMATS.get(suffix_of(path.name), PLAIN)


def missing_library(found: Format) -> str:
    """Why a file of `found`'s format is skipped when its optional library is not installed."""
    return (
        f"{found.kind} needs the optional {found.extra!r} extra: pip install 'lancelot-indexer[{found.extra}]' "
        f"(or uv tool install 'lancelot-indexer[{found.extra}]')"
    )


def extract(reader: Format, content: str | bytes, file_name: str) -> Document:
    """The document `content` holds, read by `reader`; Unreadable when it cannot be used."""
    if reader.library is not None:
        try:
            importlib.import_module(reader.library)
        except ImportError as exc:
            raise Unreadable(missing_library(reader)) from exc
    module = importlib.import_module(reader.module)
    document: Document = module.extract(content, file_name)
    return document
