"""What a table is about: its description, and the small record beside it that says so without Lance.

    problem(text)              # why `lancelot-index --description TEXT` is refused, or None
    cleaned(text)              # a description as shown: one line, no control character, at most MAX_DESCRIPTION
    record(about) -> str       # the record `NAME.lance/lancelot-about.json`, as the indexer writes it
    parsed(text) -> About      # the same, read back (None: not a record this rule wrote)
    latest(table_dir)          # the table's latest manifest in a folder: its name, size, modification time

The description is stamped in the table (`layout.META_DESCRIPTION`); the record repeats it with the table's
counts and the manifest of the version it describes, so that a server names its tables in `tools/list` with
a file read on a folder, where opening a table costs Lance's import (docs/decisions.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ABOUT = "lancelot-about.json"
# Enough for "PostgreSQL 15 manual: SQL commands, server administration, the C API" and more; short enough that
# several tables fit in a tool's description.
MAX_DESCRIPTION = 200
# Larger than any record: a bigger file is not one the indexer wrote.
MAX_RECORD = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SPACES = re.compile(r"\s+")
# Lance names manifests `{u64::MAX - version}.manifest` (the newest sorts first), or `{version}.manifest`.
_U64_MAX = 2**64 - 1


def problem(text: str) -> str | None:
    """Why `text` cannot be a table's description, or None."""
    if not text.strip():
        return "is empty; say in a few words what the documents are, e.g. 'PostgreSQL 15 manual'."
    if _CONTROL.search(text):
        return "holds a control character (a newline, a tab...); give one line of plain text."
    if len(text.strip()) > MAX_DESCRIPTION:
        return f"is {len(text.strip()):,} characters long; keep it to {MAX_DESCRIPTION} (a phrase, not a page)."
    return None


def cleaned(text: str) -> str:
    """`text` as a description is shown: control characters and runs of white space one space, at most
    MAX_DESCRIPTION characters (cut with "…"). Derived descriptions come from the documents, and a record may
    have been edited: whatever it holds, a reader gets one bounded line."""
    line = _SPACES.sub(" ", _CONTROL.sub(" ", text)).strip()
    return line if len(line) <= MAX_DESCRIPTION else line[: MAX_DESCRIPTION - 1].rstrip() + "…"


@dataclass(frozen=True)
class About:
    """A table's description and size, as of the manifest named (`latest`'s answer when it was written)."""

    description: str
    documents: int
    passages: int
    manifest: list[Any]


def record(about: About) -> str:
    return json.dumps(
        {
            "description": about.description,
            "documents": about.documents,
            "passages": about.passages,
            "manifest": about.manifest,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def parsed(text: str | bytes) -> About | None:
    """The record, or None when `text` is not one (too long, not JSON, a field missing or of another type)."""
    if len(text) > MAX_RECORD:
        return None
    try:
        raw = json.loads(text)
        description, documents, passages, manifest = (
            raw["description"], raw["documents"], raw["passages"], raw["manifest"]
        )  # fmt: skip
    except (ValueError, TypeError, KeyError):
        return None
    numbers = all(type(value) is int and value >= 0 for value in (documents, passages))
    if not (isinstance(description, str) and numbers and isinstance(manifest, list)):
        return None
    return About(cleaned(description), documents, passages, manifest)


def version(name: str) -> int | None:
    """The version a manifest's file name stands for, or None when it is not a manifest's name."""
    stem = name.removesuffix(".manifest")
    if stem == name or not stem.isascii() or not stem.isdigit():
        return None
    number = int(stem)
    return _U64_MAX - number if len(stem) == 20 and number > 2**63 else number


def newest(names: list[str]) -> str | None:
    """The newest of a `_versions/` listing's manifests; None when it has none, or one Lance did not name."""
    manifests = [name for name in names if name.endswith(".manifest")]
    versions = [(version(name), name) for name in manifests]
    if not versions or any(number is None for number, _ in versions):
        return None
    return max(versions, key=lambda pair: pair[0] or 0)[1]


def latest(table_dir: Path) -> list[Any] | None:
    """The latest manifest of the table in folder `table_dir`: its name, size and modification time (a copy
    of the folder made since has other times); None when in doubt."""
    try:
        name = newest([entry.name for entry in (table_dir / "_versions").iterdir()])
        if name is None:
            return None
        stat = (table_dir / "_versions" / name).stat()
    except OSError:
        return None
    return [name, stat.st_size, stat.st_mtime_ns]


def read(table_dir: Path) -> About | None:
    """The record beside the table in folder `table_dir`, if it describes the table's latest version."""
    try:
        with (table_dir / ABOUT).open("rb") as handle:
            text = handle.read(MAX_RECORD + 1)
    except OSError:
        return None
    found = parsed(text)
    return found if found is not None and found.manifest == latest(table_dir) else None
