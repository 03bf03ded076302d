"""lancedb_status: the database, every served table the caller sees, the embedding settings, what can run.

`table`, `embedding.note` and `searchTypes` are about the default table (LANCEDB_TABLE, or the first served
table the caller sees), as before several tables; `tables` describes each served table the caller sees the
same way, default first; `database.tables` names every table the database holds, served or not (names
only: a table not served is never opened), served ones first. Nothing names a table the caller may not see.
"""

from __future__ import annotations

import json
from typing import Any, cast

from lancelot_schema import about, layout
from lancelot_schema.settings import Settings
from lancelot_server import __version__
from lancelot_server.errors import LancelotError, TableNotFound, VectorSearchUnavailable, shown
from lancelot_server.reading import documents
from lancelot_server.replies import (
    Cache,
    DatabaseStatus,
    EmbeddingStatus,
    SearchType,
    StatusReply,
    TableMetadata,
    TableStatus,
)
from lancelot_server.search import core
from lancelot_server.search.embed import endpoint_host
from lancelot_server.search.modes import Modes
from lancelot_server.storage.freshness import freshness
from lancelot_server.storage.store import UNREADABLE_INDEX, Layout, Store, damage, describe
from lancelot_server.storage.tables import Tables


def report(settings: Settings, store: Store, tables: Tables, modes: Modes) -> StatusReply:
    database = DatabaseStatus(path=store.db_path, exists=store.exists(), tables=[])
    embedding = EmbeddingStatus(
        model=settings.embedding_model, endpoint=endpoint_host(settings), apiKey=settings.has_api_key
    )
    vectors: str | None = None
    listed: list[TableStatus] = []
    try:
        database["tables"] = tables.held()
        names = tables.visible()
        default = tables.default()
    except TableNotFound as exc:  # the caller sees no table at all: none is named, not even the default
        table = TableStatus(name="", exists=False, error=str(exc))
    except LancelotError as exc:  # the database cannot be read
        database["error"] = str(exc)
        table = TableStatus(name=settings.table if tables.sees(settings.table) else "", exists=False)
    else:
        if (note := store.problem()) is not None:
            database["note"] = note
        described = {name: _table(settings, store, tables, modes, name) for name in names}
        listed = [status for status, _ in described.values()]
        table, vectors = described[default]
    bound, used = store.cache()  # after the tables were described: what reading them cost too
    database["cache"] = Cache(boundBytes=bound, usedBytes=used)
    if vectors is not None:
        embedding["note"] = f"{vectors}; vector and hybrid search fall back to text search"
    return StatusReply(
        database=database,
        table=table,
        tables=listed,
        embedding=embedding,
        searchTypes=list(table.get("searchTypes", [])),
        version=__version__,
    )


def _table(settings: Settings, store: Store, tables: Tables, modes: Modes, name: str) -> tuple[TableStatus, str | None]:
    """One table's status, and why vector search cannot run on it (None when it can, or nothing can)."""
    table = TableStatus(name=name, exists=False)
    try:
        handle = tables.open(name)
        table["exists"] = True
        table_layout = describe(handle.schema, settings.text_column, name)
        with store.reading():  # on object storage, the bucket may stop answering after the table opened
            table = _described(store, name, handle, table_layout)
    except LancelotError as exc:
        table["error"] = str(exc)
        table["searchTypes"] = []
        return table, None
    types: list[SearchType] = []
    vectors: str | None = None
    # A table with files missing answers no search at all; say so rather than list search types.
    if table["readable"]:
        types.append("text")
        try:
            modes.check_vectors(table_layout)
        except VectorSearchUnavailable as exc:
            vectors = str(exc)
        else:
            types += ["vector", "hybrid"] if table["fullTextIndex"] else ["vector"]
    table["searchTypes"] = types
    return table, vectors


def _described(store: Store, name: str, handle: Any, table_layout: Layout) -> TableStatus:
    found = damage(handle)
    broken_index = found.index_broken(table_layout.text)
    rows = handle.count_rows()
    metadata, unreadable_stamp = _metadata(table_layout.stamped)
    table = TableStatus(
        name=name,
        exists=True,
        readable=not found.missing,
        rows=rows,
        columns=list(table_layout.columns),
        textColumn=table_layout.text,
        titleColumn=table_layout.title,
        sourceColumns=list(table_layout.sources),
        vectorColumn=table_layout.vector,
        vectorWidth=table_layout.vector_width,
        fullTextIndex=core.has_fts_index(handle, table_layout.text) and not broken_index,
        language=table_layout.language,
        documentReads="indexed" if documents.indexed(table_layout) else "scan",
        metadata=metadata,
        description=about.cleaned(table_layout.stamped.get("description", "")) or None,
    )
    if not found.missing:
        table["freshness"] = freshness(handle, table_layout, rows, found)
    if found.missing:
        table["error"] = str(store.unreadable(name, found))
    elif broken_index:
        table["note"] = f"{UNREADABLE_INDEX}; text search matches substrings"
    if unreadable_stamp is not None:
        table["note"] = "; ".join(filter(None, (table.get("note"), unreadable_stamp)))
    return table


EXCLUDE = layout.META_EXCLUDE.removeprefix("lancelot.")


def _metadata(stamped: dict[str, str]) -> tuple[TableMetadata, str | None]:
    """The stamp as the reply shows it, with `exclude` as the list of patterns its JSON holds; and, when that is
    no JSON list of text (a stamp written by hand or damaged), a note saying so, the stamp left out of the
    metadata: status still answers, and the indexer, finding its settings changed, stamps it again."""
    shaped: dict[str, Any] = dict(stamped)
    raw = stamped.get(EXCLUDE)
    if raw is None:
        return cast(TableMetadata, shaped), None
    try:
        patterns = json.loads(raw)
    except ValueError:
        patterns = None
    if isinstance(patterns, list) and all(isinstance(pattern, str) for pattern in patterns):
        shaped[EXCLUDE] = patterns
        return cast(TableMetadata, shaped), None
    del shaped[EXCLUDE]
    return cast(TableMetadata, shaped), (
        f"its {layout.META_EXCLUDE} stamp is not a JSON list of patterns ({shown(raw)}), so metadata leaves it out; "
        "a rebuild with lancelot-index stamps it again"
    )
