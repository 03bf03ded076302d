"""What a local folder holds, from its listing and a stat or two (nothing is opened): a LanceDB database's
tables, each the Lance dataset `DB/NAME.lance` with its `_versions` folder."""

from __future__ import annotations

from pathlib import Path

TABLE_SUFFIX = ".lance"


def is_table(path: Path) -> bool:
    """Whether `path` is the folder of one table."""
    return path.suffix == TABLE_SUFFIX and not path.name.startswith(".") and (path / "_versions").is_dir()


def tables(folder: Path) -> tuple[str, ...]:
    """The names of the tables in the database folder `folder`, sorted; OSError when it cannot be listed."""
    return tuple(sorted(entry.name.removesuffix(TABLE_SUFFIX) for entry in folder.iterdir() if is_table(entry)))
