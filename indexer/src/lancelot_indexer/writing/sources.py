"""What a table was built from: each document's content hash, and the settings its rows depend on.

    copy = place(location, table)                    # where the saved copy lives: the table's folder or prefix
    previous = cached(copy)                          # None unless it is the latest version's (no Lance on a folder)
    previous = from_table(dataset)                   # the same, read from the table itself
    full_rebuild_reason(previous.settings, wanted)   # None: files whose hash is unchanged keep their rows
    save(copy, previous)                             # after a run's last commit

The table is the record: every row carries its file's hash (`file_hash`) and the table is stamped with the
settings. The copy beside it (`NAME.lance/lancelot-sources.json`) names the manifest of the version it
describes: while that is still the table's latest version, a rebuild learns what the table was built from
without reading the table. On a folder that is also without importing Lance, the largest part of a rebuild
that finds nothing changed (docs/decisions.md). On object storage it is two requests through Lance's object
store (a listing of `_versions/`, a read of the copy) where reading the table's path and hash columns is a
request or more per data file; a manifest there is written once and never changed, so its name is enough.
Any doubt (no copy, another version, a manifest name Lance did not write before) means reading the table.
Beside it `save` writes what the server tells an assistant about the table (`lancelot_schema.about`): its
description and counts, for the same manifest.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lancelot_indexer.documents.generated import KINDS, Generated
from lancelot_indexer.readers import formats
from lancelot_indexer.writing import database
from lancelot_schema import about, layout
from lancelot_schema.storage import Location

CACHE = "lancelot-sources.json"
# More than any copy needs (about 100 bytes a document): a read of the whole object in one request.
_MAX_COPY = 1 << 30

# The stamp that decides what a row holds: when any of these differ, every file is read again. The indexer's
# version is one of them; the language too, as a rebuild in another language is expected to make everything
# again. The readers' revisions are not (`layout.META_READERS`): a changed reader reads its own files again.
ROW_SETTINGS = (
    layout.META_LAYOUT_VERSION,
    layout.META_INDEXER_VERSION,
    layout.META_CHUNK_SIZE,
    layout.META_LANGUAGE,
    layout.META_LINK_TEMPLATE,
    layout.META_EXCLUDE,
    layout.META_KEEP_GENERATED,
    layout.META_EMBEDDING_MODEL,
    layout.META_EMBEDDED,
    layout.META_EMBEDDING_HOST,
)
# What a person calls a stamped setting where its key says otherwise (the stamp keeps its name).
_LABELS = {layout.META_CHUNK_SIZE: "passage size"}


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
    source: str = ""  # the DOCS folder stamped (layout.META_SOURCE): a run from another path stamps its own
    readers: str = ""  # each suffix's reader and revision (layout.META_READERS); "": stamped before they had one
    # Pages read and left out as generated (tables of contents), by path: the saved copy alone knows them.
    left_out: dict[str, Generated] = field(default_factory=dict)
    description: str = ""  # layout.META_DESCRIPTION as stamped ("": a table stamped before descriptions)


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
            return f"{_LABELS.get(key) or key.removeprefix('lancelot.').replace('_', ' ')} {old} -> {new}"
    return None


def from_table(dataset: Any, fts: bool) -> Sources:
    """What the table (a Lance dataset) says it was built from."""
    settings = stamped(dataset.schema.metadata)
    if not set(layout.INDEXER_COLUMNS) <= set(dataset.schema.names):
        # Rows without a column the indexer writes now (a table of an older layout, or one stamped with this
        # layout before the column joined it) are made again from every file, not kept with nulls in it.
        return Sources(settings, {}, fts)
    pairs = dataset.to_table(columns=[layout.PATH, layout.FILE_HASH]).group_by([layout.PATH, layout.FILE_HASH])
    distinct = pairs.aggregate([])
    files: dict[str, str] = {}
    for path, digest in zip(distinct[layout.PATH].to_pylist(), distinct[layout.FILE_HASH].to_pylist(), strict=True):
        if path is not None:
            # Two hashes (or none) for one path: its rows are not all from one reading; read it again.
            files[path] = "" if path in files or digest is None else digest
    stamp = layout.decode_metadata(dataset.schema.metadata)
    width, source = stamp.get("vector_width", ""), stamp.get(layout.META_SOURCE.removeprefix("lancelot."), "")
    readers = (dataset.schema.metadata or {}).get(layout.META_READERS.encode(), b"").decode("utf-8", "replace")
    rows, version = dataset.count_rows(), dataset.version
    description = stamp.get(layout.META_DESCRIPTION.removeprefix("lancelot."), "")
    width_stamped = int(width) if width.isdigit() else 0
    return Sources(settings, files, fts, rows, version, width_stamped, source, readers, description=description)


@dataclass(frozen=True)
class Known:
    """What rows may be kept by: the hash of each file with rows (`files`), the generated pages read and left out
    (`left_out`), and the paths of either whose reader changed since (`reread`), whose hash is forgotten so that
    they are read again."""

    files: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, Generated] = field(default_factory=dict)
    reread: frozenset[str] = frozenset()


def known(previous: Sources | None) -> Known:
    """What rows of the `previous` table may be kept by (nothing without one, or when a setting changed: None)."""
    if previous is None:
        return Known()
    changed = formats.changed_since(previous.readers)
    reread = frozenset(path for path in [*previous.files, *previous.left_out] if changed(path))
    files = {path: "" if path in reread else digest for path, digest in previous.files.items()}
    left_out = {path: page for path, page in previous.left_out.items() if path not in reread}
    return Known(files, left_out, reread)


class Folder:
    """The table's folder on this machine."""

    def __init__(self, table_dir: Path) -> None:
        self.table_dir = table_dir

    def latest(self) -> list[Any] | None:
        """The table's latest manifest: its name, size and modification time; None when in doubt."""
        return about.latest(self.table_dir)

    def read(self) -> str:
        with (self.table_dir / CACHE).open(encoding="utf-8") as handle:
            return handle.read()

    def write(self, text: str, name: str = CACHE) -> None:
        # `.tmp` first: a run killed here leaves a file that the next run's clean-up removes.
        temporary = self.table_dir / f".tmp-{name}"
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(text)
        temporary.replace(self.table_dir / name)

    def remove(self, name: str = CACHE) -> None:
        (self.table_dir / name).unlink()


class Prefix:
    """The table's prefix on object storage, through Lance's object store (its credentials and options)."""

    def __init__(self, location: Location, table: str) -> None:
        from lance.file import LanceFileSession

        self._session = LanceFileSession(location.table_uri(table), storage_options=database.options(location))

    def latest(self) -> list[Any] | None:
        """The table's latest manifest's name (written once: the name says which version it is); None in doubt."""
        try:
            names = [path.rsplit("/", 1)[-1] for path in self._session.list("_versions")]
        except OSError:
            return None
        name = about.newest(names)
        return [name] if name is not None else None

    def read(self) -> str:
        return self._session.read_range(CACHE, 0, _MAX_COPY).decode("utf-8")

    def write(self, text: str, name: str = CACHE) -> None:
        # One PUT: the object is replaced whole (an upload of several parts appears only once complete).
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / name
            path.write_text(text, encoding="utf-8")
            self._session.upload_file(str(path), name)

    def remove(self, name: str = CACHE) -> None:
        self._session.delete_file(name)


def place(location: Location, table: str) -> Folder | Prefix | None:
    """Where table `table`'s saved copy lives; None where a listing does not tell the latest version (Lance's
    DynamoDB commit table holds it), so the table is read instead."""
    if location.local:
        return Folder(location.path / f"{table}.lance")
    return None if location.scheme == "s3+ddb" else Prefix(location, table)


def cached(copy: Folder | Prefix | Path) -> Sources | None:
    """The copy saved by the last run, if the table has not changed since (its latest manifest is the one named).
    `copy`: from `place`, or a table's folder."""
    copy = Folder(copy) if isinstance(copy, Path) else copy
    latest = copy.latest()
    if latest is None:
        return None
    try:
        saved = json.loads(copy.read())
        # A copy made when the layout had other columns (or before copies named them) describes rows that lack
        # some: the table is read, and its files read again (`from_table`).
        if saved["manifest"] != latest or saved.get("columns") != list(layout.INDEXER_COLUMNS):
            return None
        version = about.version(latest[0]) or 0
        files, rows, width = dict(saved["files"]), int(saved["rows"]), int(saved["width"])
        settings, source, readers = dict(saved["settings"]), str(saved["source"]), str(saved.get("readers", ""))
        description = str(saved.get("description", ""))
        left_out = {
            path: Generated(path, generator, KINDS[kind], digest)
            for path, (digest, generator, kind) in saved.get("left_out", {}).items()
            if kind in KINDS
        }
        return Sources(
            settings, files, bool(saved["fts"]), rows, version, width, source, readers, left_out, description
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(copy: Folder | Prefix | Path, sources: Sources) -> None:
    """Record `sources` as what the table's latest version was built from (replaced whole, never half-written),
    and what the table is about for the server (`about.ABOUT`)."""
    copy = Folder(copy) if isinstance(copy, Path) else copy
    latest = copy.latest()
    if latest is None:
        for name in (CACHE, about.ABOUT):
            with contextlib.suppress(OSError):
                copy.remove(name)
        return
    record = {
        "manifest": latest,
        "columns": list(layout.INDEXER_COLUMNS),
        "fts": sources.fts,
        "rows": sources.rows,
        "width": sources.width,
        "source": sources.source,
        "readers": sources.readers,
        "left_out": {path: [page.digest, page.generator, page.kind.one] for path, page in sources.left_out.items()},
        "settings": sources.settings,
        "files": sources.files,
        "description": sources.description,
    }
    told = about.About(sources.description, len(sources.files), sources.rows, latest)
    with contextlib.suppress(OSError):
        copy.write(json.dumps(record, separators=(",", ":")))
        copy.write(about.record(told), about.ABOUT)
