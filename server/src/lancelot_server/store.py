"""Read-only access to the LanceDB database: open lazily, never create, see rebuilds at the next call.

The store is the only way the tools reach the database. It can list tables, describe one and hand out
its handle for queries; nothing here (or anywhere in the server) writes. lancedb is imported on first
use, not at import: it costs seconds, and `tools/list` must not wait for it.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from lancelot_schema import languages, layout
from lancelot_server.errors import DatabaseNotFound, TableLayoutError, TableNotFound, shown

# Zero: every query checks for a newer table version first, so a table that lancelot-index rebuilt
# is served at the very next call. The check is a small metadata read; LanceDB commits a version
# atomically, so a reader sees the old table or the new one, never a half-written one.
READ_CONSISTENCY = timedelta(0)


@dataclass(frozen=True)
class Layout:
    """Which columns of a table play which part in a hit."""

    columns: tuple[str, ...]
    text: str
    id: str | None
    title: str | None
    heading: str | None
    sources: tuple[str, ...]
    vectors: dict[str, int] = field(default_factory=dict)
    stamped: dict[str, str] = field(default_factory=dict)
    # Layout 2's locators (None in older tables and other tools' tables).
    passage: str | None = None
    passages: str | None = None
    line_start: str | None = None
    line_end: str | None = None
    anchor: str | None = None

    @property
    def link_template(self) -> str | None:
        """The `lancelot-index --link` template the table was stamped with, if any."""
        return self.stamped.get("link_template") or None

    @property
    def language(self) -> str:
        """How the table's full-text indexes split words (`lancelot-index --language`): tables stamped before
        layout 3, and other tools' tables, were indexed in English."""
        return self.stamped.get("language") or languages.DEFAULT

    @property
    def vector(self) -> str | None:
        """The vector column searched: ours (`vector`) when present, else the first fixed-size float list."""
        return next(iter(self.vectors), None)

    @property
    def vector_width(self) -> int | None:
        return self.vectors[self.vector] if self.vector else None

    @property
    def readable(self) -> list[str]:
        """Every column a hit is built from: all but the vectors, which are large and meaningless to read."""
        return [name for name in self.columns if name not in self.vectors]


def _vector_widths(schema: Any) -> dict[str, int]:
    import pyarrow as pa

    found: dict[str, int] = {}
    for arrow_field in schema:
        kind = arrow_field.type
        if pa.types.is_fixed_size_list(kind) and pa.types.is_floating(kind.value_type):
            found[arrow_field.name] = kind.list_size
    # Our own column name first, so a table with several vector columns searches the documented one.
    ours = {name: found[name] for name in layout.VECTOR_COLUMNS if name in found}
    return {**ours, **found}


UNREADABLE_INDEX = "the full-text index cannot be read (damaged or incomplete; rebuild the table with lancelot-index)"


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


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def describe(schema: Any, text_column: str, table: str) -> Layout:
    """The layout of a table from its Arrow schema; a table without the text column cannot be searched."""
    names = tuple(schema.names)
    if text_column not in names:
        raise TableLayoutError(
            f"Table {table!r} has no text column {text_column!r} (LANCEDB_TEXT_COLUMN); its columns are "
            f"{', '.join(names)}. Set LANCEDB_TEXT_COLUMN to the column that holds the passages."
        )
    import pyarrow as pa

    kind = schema.field(text_column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise TableLayoutError(
            f"Table {table!r} has a column {text_column!r} (LANCEDB_TEXT_COLUMN), but it holds {kind}, not text. "
            "Set LANCEDB_TEXT_COLUMN to the column that holds the passages."
        )
    return Layout(
        columns=names,
        text=text_column,
        id=layout.ID if layout.ID in names else None,
        title=layout.TITLE if layout.TITLE in names else None,
        heading=layout.HEADING if layout.HEADING in names else None,
        sources=tuple(name for name in layout.SOURCE_COLUMNS if name in names),
        vectors=_vector_widths(schema),
        stamped=layout.decode_metadata(schema.metadata),
        passage=_present(layout.PASSAGE, names),
        passages=_present(layout.PASSAGES, names),
        line_start=_present(layout.LINE_START, names),
        line_end=_present(layout.LINE_END, names),
        anchor=_present(layout.ANCHOR, names),
    )


def _present(column: str, names: tuple[str, ...]) -> str | None:
    return column if column in names else None


class Store:
    """One database folder, connected on first use; table handles are opened once and reused."""

    def __init__(self, db_path: str | None) -> None:
        self.db_path = db_path
        self._lock = threading.Lock()
        self._db: Any = None
        self._tables: dict[str, Any] = {}

    def exists(self) -> bool:
        return self.db_path is not None and Path(self.db_path).is_dir()

    def _check_path(self) -> str:
        if self.db_path is None:
            raise DatabaseNotFound(
                "No database is configured. Set LANCEDB_PATH to the folder that lancelot-index wrote "
                "(or run lancelot-init)."
            )
        if _URL.match(self.db_path):
            raise DatabaseNotFound(
                f"LANCEDB_PATH {self.db_path} is a URL; Lancelot reads a local database folder (on AWS Lambda, "
                "a folder in the image or on EFS)."
            )
        path = Path(self.db_path)
        if not path.exists():
            raise DatabaseNotFound(
                f"The database folder {self.db_path} does not exist. Check LANCEDB_PATH, or build it with "
                f"`lancelot-index DOCS {self.db_path}`."
            )
        if not path.is_dir():
            raise DatabaseNotFound(f"LANCEDB_PATH {self.db_path} is a file, not a database folder.")
        # Absolute, so that lancedb never reads a folder named `file:db` or `memory:x` as a URL.
        return str(path.absolute())

    def _connection(self) -> Any:
        # Checked on every call, not only the first: connecting to a missing local folder would
        # create it on the first write, and the folder may also vanish while we serve.
        path = self._check_path()
        with self._lock:
            if self._db is None:
                import lancedb

                self._db = lancedb.connect(path, read_consistency_interval=READ_CONSISTENCY)
            return self._db

    def table_names(self) -> list[str]:
        db = self._connection()
        names: list[str] = []
        token: str | None = None
        while True:
            page = db.list_tables(page_token=token)
            names.extend(page.tables)
            token = page.page_token
            if not token:
                return sorted(names)

    def table(self, name: str) -> Any:
        """The table's handle, opened once. A table that is gone (dropped, or its folder replaced) is reopened."""
        db = self._connection()
        with self._lock:
            handle = self._tables.get(name)
        if handle is not None:
            try:
                handle.version  # noqa: B018 - cheap probe: fails once the table's files are gone
                return handle
            except Exception:
                with self._lock:
                    self._tables.pop(name, None)
        if name not in self.table_names():
            raise TableNotFound(self._missing_table(name))
        try:
            handle = db.open_table(name)
        except (FileNotFoundError, ValueError) as exc:
            # Listed but unreadable: a damaged folder, or one dropped since the listing.
            if name not in self.table_names():
                raise TableNotFound(self._missing_table(name)) from exc
            raise self.unreadable(name) from exc
        with self._lock:
            self._tables[name] = handle
        return handle

    def unreadable(self, name: str, found: Damage | None = None) -> TableLayoutError:
        detail = ""
        if found is not None and found.missing:
            more = len(found.missing) - 1
            others = f", and {more} more file{'s' if more > 1 else ''}" if more else ""
            detail = f": {found.missing[0]} is missing{others}"
        return TableLayoutError(
            f"Table {shown(name)} in {self.db_path} cannot be read (damaged or incomplete{detail}). "
            "Rebuild it with lancelot-index."
        )

    def _missing_table(self, name: str) -> str:
        # No listing here: which tables a caller may hear of is `tables.Tables`'s to say.
        return f"Table {shown(name)} is not in the database {self.db_path}."
