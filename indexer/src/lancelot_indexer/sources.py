"""What a table was built from: each document's content hash, and the settings its rows depend on.

    previous = cached(table_dir)                     # without Lance; None unless it is the latest version's
    previous = from_table(dataset)                   # the same, read from the table itself
    full_rebuild_reason(previous.settings, wanted)   # None: files whose hash is unchanged keep their rows
    save(table_dir, previous)                        # after a run's last commit

The table is the record: every row carries its file's hash (`file_hash`) and the table is stamped with the
settings. The copy beside it (`NAME.lance/lancelot-sources.json`) names the manifest of the version it
describes: while that is still the table's latest version, a rebuild learns what the table was built from
without importing Lance, the largest part of a rebuild that finds nothing changed (docs/decisions.md).
Any doubt (no copy, another version, a manifest name Lance did not write before) means reading the table.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lancelot_schema import layout

CACHE = "lancelot-sources.json"

# The stamp that decides what a row holds: when any of these differ, every file is read again. The indexer's
# version is one of them (its readers may have changed); the language too, as a rebuild in another language
# is expected to make everything again.
ROW_SETTINGS = (
    layout.META_LAYOUT_VERSION,
    layout.META_INDEXER_VERSION,
    layout.META_CHUNK_SIZE,
    layout.META_LANGUAGE,
    layout.META_LINK_TEMPLATE,
    layout.META_EXCLUDE,
    layout.META_EMBEDDING_MODEL,
    layout.META_EMBEDDED,
    layout.META_EMBEDDING_HOST,
)
# Lance names manifests `{u64::MAX - version}.manifest` (the newest sorts first), or `{version}.manifest`.
_U64_MAX = 2**64 - 1


@dataclass(frozen=True)
class Sources:
    """`settings`: ROW_SETTINGS as stamped ("" when absent); `files`: relative path -> SHA-256 of its bytes
    ("" when the table does not say: such a file is read again); `fts`: whether full-text indexes were made."""

    settings: dict[str, str]
    files: dict[str, str]
    fts: bool = True
    rows: int = 0  # the table's rows, version and vector width, for the report of a run that changes nothing
    version: int = 0
    width: int = 0


def settings_of(stamp: Mapping[str, str]) -> dict[str, str]:
    return {key: stamp.get(key, "") for key in ROW_SETTINGS}


def stamped(raw: Mapping[bytes, bytes] | None) -> dict[str, str]:
    """ROW_SETTINGS from an Arrow schema's metadata."""
    raw = raw or {}
    return settings_of(
        {key: raw[key.encode()].decode("utf-8", "replace") for key in ROW_SETTINGS if key.encode() in raw}
    )


def full_rebuild_reason(before: Mapping[str, str], wanted: Mapping[str, str]) -> str | None:
    """Why no row of the table can be kept (a setting changed), or None."""
    for key in ROW_SETTINGS:
        if before.get(key, "") != wanted.get(key, ""):
            old, new = before.get(key) or "none", wanted.get(key) or "none"
            return f"{key.removeprefix('lancelot.').replace('_', ' ')} {old} -> {new}"
    return None


def from_table(dataset: Any, fts: bool) -> Sources:
    """What the table (a Lance dataset) says it was built from."""
    settings = stamped(dataset.schema.metadata)
    if layout.FILE_HASH not in dataset.schema.names:
        return Sources(settings, {}, fts)
    pairs = dataset.to_table(columns=[layout.PATH, layout.FILE_HASH]).group_by([layout.PATH, layout.FILE_HASH])
    distinct = pairs.aggregate([])
    files: dict[str, str] = {}
    for path, digest in zip(distinct[layout.PATH].to_pylist(), distinct[layout.FILE_HASH].to_pylist(), strict=True):
        if path is not None:
            # Two hashes (or none) for one path: its rows are not all from one reading; read it again.
            files[path] = "" if path in files or digest is None else digest
    width = layout.decode_metadata(dataset.schema.metadata).get("vector_width", "")
    return Sources(settings, files, fts, dataset.count_rows(), dataset.version, int(width) if width.isdigit() else 0)


def _version(name: str) -> int | None:
    stem = name.removesuffix(".manifest")
    if stem == name or not stem.isascii() or not stem.isdigit():
        return None
    number = int(stem)
    return _U64_MAX - number if len(stem) == 20 and number > 2**63 else number


def _latest(table_dir: Path) -> list[Any] | None:
    """The table's latest manifest: its name, size and modification time; None when in doubt."""
    try:
        names = [entry.name for entry in (table_dir / "_versions").iterdir() if entry.name.endswith(".manifest")]
    except OSError:
        return None
    versions = [(_version(name), name) for name in names]
    if not versions or any(version is None for version, _ in versions):
        return None
    name = max(versions, key=lambda pair: pair[0] or 0)[1]
    try:
        stat = (table_dir / "_versions" / name).stat()
    except OSError:
        return None
    return [name, stat.st_size, stat.st_mtime_ns]


def cached(table_dir: Path) -> Sources | None:
    """The copy saved by the last run, if the table has not changed since (its latest manifest is the one named)."""
    latest = _latest(table_dir)
    if latest is None:
        return None
    try:
        with (table_dir / CACHE).open(encoding="utf-8") as handle:
            saved = json.load(handle)
        if saved["manifest"] != latest:
            return None
        version = _version(latest[0]) or 0
        files, rows, width = dict(saved["files"]), int(saved["rows"]), int(saved["width"])
        return Sources(dict(saved["settings"]), files, bool(saved["fts"]), rows, version, width)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(table_dir: Path, sources: Sources) -> None:
    """Record `sources` as what the table's latest version was built from (replaced whole, never half-written)."""
    latest = _latest(table_dir)
    target = table_dir / CACHE
    if latest is None:
        with contextlib.suppress(OSError):
            target.unlink()
        return
    record = {
        "manifest": latest,
        "fts": sources.fts,
        "rows": sources.rows,
        "width": sources.width,
        "settings": sources.settings,
        "files": sources.files,
    }
    # `.tmp` first: a run killed here leaves a file that the next run's clean-up removes.
    temporary = table_dir / f".tmp-{CACHE}"
    with contextlib.suppress(OSError):
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(record, handle, separators=(",", ":"))
        temporary.replace(target)
