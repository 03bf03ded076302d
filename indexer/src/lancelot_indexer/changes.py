"""Which documents changed since the table was built: every file is read and hashed, none is parsed.

    changes(found, known) -> Changes   # known: relative path -> SHA-256 of the file the rows came from

A file whose bytes hash as they did keeps its rows; every other file (edited, new, or skipped before) is
read again, and the rows of every known path not kept (edited, removed, renamed) are replaced. Hashing is
done by a few threads of this process: reading and SHA-256 release the GIL, so they run side by side
with no process to start and nothing to pickle (the PostgreSQL manual's 16 MB hash in about 0.05 s).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lancelot_indexer.collect import read_bytes
from lancelot_indexer.decode import CP1252, encoding_of
from lancelot_indexer.walk import Found

_THREADS = 4  # reading from the page cache and hashing: a few threads keep two cores busy


@dataclass(frozen=True)
class Changes:
    """`to_read`: files to parse, in walk order; `kept`: paths whose rows stay; `replaced`: known paths whose
    rows go (their files changed, vanished or cannot be used now); `windows_1252`: kept files read that way."""

    to_read: list[Found]
    kept: list[str]
    replaced: frozenset[str]
    windows_1252: list[str]


def _fingerprint(found: Found) -> tuple[str, str] | None:
    """The file's SHA-256 and encoding; None when it cannot be read or decoded (the reader will say why)."""
    try:
        data = read_bytes(found.path)
        return hashlib.sha256(data).hexdigest(), encoding_of(data)
    except Exception:  # whatever it is, reading the file again reports it
        return None


def fingerprints(found: Sequence[Found], threads: int = _THREADS) -> list[tuple[str, str] | None]:
    """`_fingerprint` of every file, in order."""
    results: list[tuple[str, str] | None] = [None] * len(found)
    count = max(1, min(threads, len(found), (os.cpu_count() or 1) * 2))

    def work(start: int) -> None:
        for index in range(start, len(found), count):
            results[index] = _fingerprint(found[index])

    if count == 1:
        work(0)
        return results
    workers = [threading.Thread(target=work, args=(start,), daemon=True) for start in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


def changes(found: Sequence[Found], known: Mapping[str, str]) -> Changes:
    """Compare every file with the hash its rows were made from (`known`, by relative path)."""
    to_read: list[Found] = []
    kept: list[str] = []
    windows_1252: list[str] = []
    for item, fingerprint in zip(found, fingerprints(found) if known else [None] * len(found), strict=True):
        if fingerprint is not None and known.get(item.relative) == fingerprint[0]:
            kept.append(item.relative)
            if fingerprint[1] == CP1252:
                windows_1252.append(item.relative)
        else:
            to_read.append(item)
    return Changes(to_read, kept, frozenset(known.keys() - set(kept)), windows_1252)
