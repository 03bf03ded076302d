"""What a local folder holds, from its listing and a stat or two (nothing is opened): a LanceDB database's
tables, each the Lance dataset `DB/NAME.lance` with its `_versions` folder, or files such as documents."""

from __future__ import annotations

import itertools
import os
from collections.abc import Collection
from pathlib import Path

# Entries looked at in a folder's top two levels to tell whether it holds files: enough for any folder of them.
LOOKED_AT = 2000

TABLE_SUFFIX = ".lance"


def is_table(path: Path) -> bool:
    """Whether `path` is the folder of one table."""
    return path.suffix == TABLE_SUFFIX and not path.name.startswith(".") and (path / "_versions").is_dir()


def tables(folder: Path) -> tuple[str, ...]:
    """The names of the tables in the database folder `folder`, sorted; OSError when it cannot be listed."""
    return tuple(sorted(entry.name.removesuffix(TABLE_SUFFIX) for entry in folder.iterdir() if is_table(entry)))


def holds_files(folder: Path, suffixes: Collection[str] | None = None) -> bool:
    """Whether a file (with one of `suffixes`, lower case, if given) is in `folder`'s top two levels, dot names
    left out; a bounded look, False when `folder` cannot be listed."""
    top = _entries(folder)
    inside = (entry for entry in top if not entry.name.startswith(".") and entry.is_dir())
    below = itertools.chain.from_iterable(_entries(Path(entry.path)) for entry in inside)
    return any(_file(entry, suffixes) for entry in itertools.islice(itertools.chain(top, below), LOOKED_AT))


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(itertools.islice(listing, LOOKED_AT))
    except OSError:
        return []


def _file(entry: os.DirEntry[str], suffixes: Collection[str] | None) -> bool:
    if entry.name.startswith(".") or (suffixes is not None and Path(entry.name).suffix.lower() not in suffixes):
        return False
    return entry.is_file()
