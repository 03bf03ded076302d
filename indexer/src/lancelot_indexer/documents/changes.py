"""Which documents changed since the table was built: every file is read and hashed, none is parsed.

    changes(found, known, left_out) -> Changes   # known: relative path -> SHA-256 of the file the rows came from

A file whose bytes hash as they did keeps its rows; every other file (edited, new, or skipped before) is
read again, and the rows of every known path not kept (edited, removed, renamed) are replaced. A page that
was read and left out as generated (`left_out`, a table of contents) stays left out while its hash holds.
Hashing runs in this process, one file after another: two or four threads took longer (each file's
Python-level work holds the GIL) and worker processes would pickle every path (docs/decisions.md,
"Incremental rebuilds").
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lancelot_indexer.documents.collect import BINARY, content
from lancelot_indexer.documents.generated import Generated
from lancelot_indexer.documents.walk import Found
from lancelot_indexer.readers import formats
from lancelot_indexer.readers.decode import CP1252, encoding_of


@dataclass(frozen=True)
class Changes:
    """`to_read`: files to parse, in walk order; `kept`: paths whose rows stay; `replaced`: known paths whose
    rows go (their files changed, vanished or cannot be used now); `windows_1252`: kept files read that way;
    `left_out`: generated pages left out as before, unread."""

    to_read: list[Found]
    kept: list[str]
    replaced: frozenset[str]
    windows_1252: list[str]
    left_out: list[Generated]


def _fingerprint(found: Found) -> tuple[str, str] | None:
    """The file's SHA-256 and encoding (BINARY for a PDF or Word file, which is not decoded); None when it cannot be
    read or decoded (the reader will say why)."""
    try:
        data = content(found)
        binary = formats.format_of(found.path).binary
        return hashlib.sha256(data).hexdigest(), BINARY if binary else encoding_of(data)
    except Exception:  # whatever it is, reading the file again reports it
        return None


def fingerprints(found: Sequence[Found]) -> list[tuple[str, str] | None]:
    """`_fingerprint` of every file, in order."""
    return [_fingerprint(item) for item in found]


def changes(
    found: Sequence[Found], known: Mapping[str, str], left_out: Mapping[str, Generated] | None = None
) -> Changes:
    """Compare every file with the hash its rows were made from (`known`, by relative path), or the hash it was
    left out with (`left_out`)."""
    to_read: list[Found] = []
    kept: list[str] = []
    windows_1252: list[str] = []
    unread: list[Generated] = []
    left_out = left_out or {}
    hashed = known or left_out
    for item, fingerprint in zip(found, fingerprints(found) if hashed else [None] * len(found), strict=True):
        if fingerprint is not None and known.get(item.relative) == fingerprint[0]:
            kept.append(item.relative)
            if fingerprint[1] == CP1252:
                windows_1252.append(item.relative)
        elif fingerprint is not None and (page := left_out.get(item.relative)) and page.digest == fingerprint[0]:
            unread.append(page)
        else:
            to_read.append(item)
    return Changes(to_read, kept, frozenset(known.keys() - set(kept)), windows_1252, unread)
