"""What a run that did not finish left in the database: files that no version of a table names.

    removed = remove(location, check)   # under the lock, before this run writes; how many files went
    remove_temp_files(table_dir)        # the `.tmp*` files a killed write left in a folder, at every run

A write uploads its data files (and deletion and index files) before the commit that names them, and a
commit writes its transaction file before its manifest. A run killed, or stopped by an error, in between
leaves those files behind: no reader sees them, but they take space, and Lance's own clean-up removes such
files only once they are older than the oldest version it keeps (`write.remove_old_versions`), so two
minutes after the kill at the earliest. The lock says whether the last run finished (`lock.py`); when it
did not, the next run removes them as soon as it holds the lock, whatever it then does, and before it
writes anything itself: no write is under way, so nothing uploaded is waiting for its commit.

A file is garbage when it is one Lance names in a manifest (`data/*.lance`, `_deletions/*.arrow|bin`,
`_indices/UUID/*`, `_transactions/*.txn`) and no manifest still under `_versions/` names it, by Lance's own
account of what each version uses (`LanceDataset.tracked_files`: every manifest's data, deletion,
transaction and index files), read after the listing, so that a version committed in between could only
add names. A reader holding any version keeps every file of it. An index folder goes whole or not at all.
Nothing else is touched (manifests, the saved copy `lancelot-sources.json`, `_refs/`, files of other
tools). A table with no manifest at all (a first build killed before its first commit) has no version, so
none of its files is named.

A write killed in a folder also leaves `.tmp*` files, which no manifest names and Lance's clean-up never
sees: they are removed at every run, whether the last one finished or not (`remove_temp_files`).

On a bucket this costs a listing of the database, and for each table a listing of it, the latest
manifest, Lance's reading of every manifest (a listing of `_versions/` and two reads each but the latest's)
and a listing of each index folder a manifest names; then a request per file removed (docs/decisions.md,
"Indexer: writing object storage"). Only after a run that did not finish.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lancelot_indexer.writing.database.location import options as storage_options
from lancelot_schema.storage import Location

# The files only a manifest makes part of a version, as Lance names them: anything else is left alone.
_VERSIONED = re.compile(r"data/[^/]+\.lance|_deletions/[^/]+\.(arrow|bin)|_indices/[^/]+/.+|_transactions/[^/]+\.txn")
_INDICES = "_indices/"


def versioned(path: str) -> bool:
    """Whether `path` (in a table) is a data, deletion, index or transaction file, which a manifest names."""
    return _VERSIONED.fullmatch(path) is not None


def remove(location: Location, check: Callable[[], None]) -> int:
    """Remove the files no version names from every table of the database at `location`; how many.
    `check` is called before the first removal (it raises when this run no longer holds the lock)."""
    from lance.file import LanceFileSession

    options = storage_options(location)
    if location.local and not location.path.is_dir():
        return 0
    listing = LanceFileSession(location.uri, storage_options=options).list_with_delimiter()
    folders = sorted(prefix.rstrip("/").rsplit("/", 1)[-1] for prefix in listing.common_prefixes)
    tables = [name.removesuffix(".lance") for name in folders if name.endswith(".lance")]
    return sum(_table(location, options, name, check) for name in tables)


def _table(location: Location, options: dict[str, str] | None, name: str, check: Callable[[], None]) -> int:
    from lance.file import LanceFileSession

    uri = location.table_uri(name)
    session = LanceFileSession(uri, storage_options=options)
    present = session.list()  # first: whatever a manifest read afterwards names stays
    candidates = [path for path in present if versioned(path)]
    if not candidates:
        return 0
    named = _named(uri, options) if any(path.startswith("_versions/") for path in present) else set()
    named |= {_index(path) for path in named if path.startswith(_INDICES)}  # an index folder is named whole
    garbage = [path for path in candidates if (_index(path) if path.startswith(_INDICES) else path) not in named]
    if garbage:
        check()
    for path in garbage:
        session.delete_file(path)
    if location.local:
        _remove_empty_folders(location.path / f"{name}.lance", garbage)
    return len(garbage)


def _named(uri: str, options: dict[str, str] | None) -> set[str]:
    """Every file a manifest present names, relative to the table (Lance's account)."""
    import lance

    dataset: Any = lance.dataset(uri, storage_options=options)
    named: set[str] = set()
    for batch in dataset.tracked_files():
        named.update(batch.column("path").to_pylist())
    return named


def _index(path: str) -> str:
    """`_indices/UUID/` of a file in an index folder."""
    return "/".join(path.split("/", 2)[:2]) + "/"


def _remove_empty_folders(table_dir: Path, removed: list[str]) -> None:
    # A folder's object store leaves an index's emptied folder behind; a bucket has no folders.
    for folder in sorted({_index(path) for path in removed if path.startswith(_INDICES)}):
        try:
            (table_dir / folder).rmdir()
        except OSError:
            continue


def remove_temp_files(table_dir: Path) -> int:
    """Remove the `.tmp*` files a killed write leaves behind (Lance's cleanup never sees them)."""
    removed = 0
    if not table_dir.is_dir():
        return 0
    for leftover in table_dir.rglob(".tmp*"):
        with contextlib.suppress(OSError):
            if leftover.is_file():
                leftover.unlink()
                removed += 1
    return removed
