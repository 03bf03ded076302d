"""Which reader reads a document, by its suffix: one line a format.

    FORMATS[".pdf"] -> Format("lancelot_indexer.readers.pdf", binary=True, extra="pdf", library="pypdfium2")
    extract(found_path, data) -> Document     # raises Unreadable with the reason a file is skipped

Every reader module has `extract(content, file_name) -> Document`: decoded text for a text format, the
file's bytes for a binary one (PDF, Word). A reader is imported when the first file of its kind is met,
in the worker process that reads it, never by the CLI: Markdown's parser takes a tenth of a second to
import, PDFium and lxml more. A format whose library is an optional extra that is not installed costs
its files only: each is skipped with the command that installs the extra, and the run goes on.

A format is known by its file name's last suffix, or its last two (`.rst.txt`: Sphinx's copies of its reST
sources). Each reader has a revision, bumped when what it makes of a file changes; the table is stamped
with every suffix's reader and revision (`stamp()`), so that a rebuild reads again the files of the formats
whose reader changed (`changed_since(stamp)`), and those alone.
"""

from __future__ import annotations

import importlib
import json
import shlex
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lancelot_schema import installation

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
    revision: int = 1  # bumped when the reader's rows of a file change (docs/decisions.md says why each time)

    @property
    def stamp(self) -> str:
        return f"{self.module.rpartition('.')[2]} {self.revision}"


PLAIN = Format("lancelot_indexer.readers.plain")
MARKDOWN = Format("lancelot_indexer.readers.markdown")
# 2: a Sphinx page that is only a table of contents is a generated page.
HTML = Format("lancelot_indexer.readers.html", revision=2)
RST = Format("lancelot_indexer.readers.rst")
FORMATS: dict[str, Format] = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".txt": PLAIN,
    ".html": HTML,
    ".htm": HTML,
    ".rst": RST,
    ".rst.txt": RST,
    # 2: lines repeated at the same place on most pages (running heads, page numbers) dropped.
    ".pdf": Format(
        "lancelot_indexer.readers.pdf", binary=True, extra="pdf", library="pypdfium2", kind="a PDF", revision=2
    ),
    # 2: the Title paragraph titles the document and tops the heading trail.
    ".docx": Format(
        "lancelot_indexer.readers.word", binary=True, extra="docx", library="docx", kind="a Word document", revision=2
    ),
}
SUFFIXES = frozenset(FORMATS)
# The last suffix of every format's (a `.rst.txt` is a `.txt`): the names the walk takes for documents.
ENDINGS = tuple(dict.fromkeys("." + suffix.rsplit(".", 1)[1] for suffix in FORMATS))
# What a table stamped before readers had revisions was read with: these suffixes, every reader at 1.
_UNSTAMPED = {
    ".md": "markdown 1", ".markdown": "markdown 1", ".txt": "plain 1", ".html": "html 1", ".htm": "html 1",
    ".rst": "rst 1", ".pdf": "pdf 1", ".docx": "word 1",
}  # fmt: skip


def suffix_of(name: str, known: Collection[str] = SUFFIXES) -> str:
    """The suffix of file `name` that names its format among `known`: its last two (`.rst.txt`) when they do,
    else its last one, lower-cased."""
    lowered = name.lower()
    last = Path(lowered).suffix
    two = Path(lowered.removesuffix(last)).suffix + last if last else ""
    return two if len(two) > len(last) and two in known else last


def format_of(path: Path) -> Format:
    return FORMATS.get(suffix_of(path.name), PLAIN)


def stamp() -> str:
    """Every suffix's reader and revision, as stamped on the table (`layout.META_READERS`)."""
    return json.dumps({suffix: found.stamp for suffix, found in sorted(FORMATS.items())}, separators=(",", ":"))


def changed_since(stamped: str) -> Callable[[str], bool]:
    """Whether the file at a path is read by another reader, or revision, than for the table stamped `stamped`
    ("": stamped before readers had revisions; a stamp that cannot be read: every file)."""
    try:
        loaded = json.loads(stamped) if stamped else _UNSTAMPED
    except ValueError:
        loaded = None
    before: dict[str, str] = loaded if isinstance(loaded, dict) else {}
    now = {suffix: found.stamp for suffix, found in FORMATS.items()}
    if before == now:
        return lambda path: False

    def changed(path: str) -> bool:
        name = path.rpartition("/")[2]
        return before.get(suffix_of(name, before)) != now.get(suffix_of(name), PLAIN.stamp)

    return changed


def missing_library(found: Format) -> str:
    """Why a file of `found`'s format is skipped when its optional library is not installed, with the command
    that adds it to this installation (`extra_command`)."""
    return f"{found.kind} needs the optional {found.extra!r} extra: {extra_command(str(found.extra))}"


def extra_command(extra: str) -> str:
    """The command that adds the indexer's optional `extra` to this installation: from a clone, that clone's
    scripts/install (the package index has no lancelot-indexer to add an extra to yet); otherwise pip's or uv's."""
    clone = installation.clone_of("lancelot-indexer")
    if clone is not None:
        return shlex.join([str(clone / "scripts" / "install"), "--extras", extra])
    return f"pip install 'lancelot-indexer[{extra}]' (or uv tool install 'lancelot-indexer[{extra}]')"


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
