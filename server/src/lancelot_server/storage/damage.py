"""What a table's current version names but the folder lacks: files deleted or copied in part, found by a stat each.

damage(handle) -> Damage     (nothing on object storage, where a stat is a request: the read itself says)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Damage:
    """What the table's current version names but the disk lacks; empty when the table is whole."""

    missing: tuple[str, ...] = ()  # data and deletion files, relative to the table folder
    unindexed: tuple[str, ...] = ()  # columns whose index folder is missing or empty

    def index_broken(self, column: str) -> bool:
        return column in self.unindexed


def damage(handle: Any) -> Damage:
    """Check that every file the current version lists is on disk: a stat per file, no data read.

    A folder copied in part, or files deleted by hand, otherwise surface only as Lance's `Not found`
    in the middle of a query. Index files are not listed in the manifest, only their folder per segment.
    """
    dataset = handle.to_lance()
    if handle.remote:
        # On object storage this would be a request per file; a missing object is reported by the read itself.
        return Damage()
    root = Path(dataset.uri)
    missing: list[str] = []
    for fragment in dataset.get_fragments():
        meta = fragment.metadata
        # A file with a base_id lives under another base path (multi-base tables); not ours to resolve.
        paths = [f"data/{file.path}" for file in meta.files if file.base_id is None]
        if meta.deletion_file is not None:
            paths.append(meta.deletion_file.path(meta.id))
        missing.extend(path for path in paths if not (root / path).is_file())
    unindexed: list[str] = []
    for index in dataset.describe_indices():
        folders = [root / "_indices" / segment.uuid for segment in index.segments]
        if any(not folder.is_dir() or not any(folder.iterdir()) for folder in folders):
            unindexed.extend(index.field_names)
    return Damage(tuple(missing), tuple(unindexed))
