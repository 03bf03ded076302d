"""One document's passages in a table, found by its source or by one passage's id, in document order.

    find(handle, layout, table, source=..., id=...) -> Document
    document.passages(first, last) -> rows with `_number`

A table that lancelot-index wrote (layout 2) is looked up through its B-tree index on `path` (each row's
passage number and row id), and the passages read are taken by row id: a read touches the document's rows,
never the whole table. Any other table (layout 1, or
AnythingLLM's) is scanned once per read and its rows are grouped by what names their document
(`rows.document_of`: the source, or in an AnythingLLM table the url, which `source` may name too when
only one document has that source); passages are numbered by the N of their ids `source#N` when every id
has one, else by table order.

Filters are pyarrow expressions with the client's text as a literal value (Lance takes them through
Substrait): nothing a client sends is ever written into SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lancelot_schema import layout
from lancelot_server.errors import InvalidRequest, shown
from lancelot_server.search.core import batches, document_array, source_array
from lancelot_server.search.rows import document_of
from lancelot_server.storage.store import Layout

NUMBER = "_number"
DOCUMENT = "_document"
Order = Literal["passage", "table"]


def indexed(table_layout: Layout) -> bool:
    """Whether passages are looked up by `path` and `passage` (a table lancelot-index wrote, layout 2)."""
    located = table_layout.passage is not None and table_layout.passages is not None
    return located and table_layout.sources == (layout.PATH,)


@dataclass
class Document:
    """The passages of one document: `total` of them, numbered from 0 in `order`."""

    table: str
    source: str
    total: int
    order: Order
    handle: Any
    table_layout: Layout
    rows: list[dict[str, Any]] | None = field(default=None, repr=False)  # all of them, for scanned tables
    row_ids: dict[int, int] | None = field(default=None, repr=False)  # passage number → row id, indexed tables

    def passages(self, first: int, last: int) -> list[dict[str, Any]]:
        """The passages numbered `first` to `last` (inclusive), in order, each row with its `_number`."""
        first, last = max(first, 0), min(last, self.total - 1)
        if first > last:
            return []
        if self.rows is not None:
            return self.rows[first : last + 1]
        assert self.row_ids is not None
        wanted = [self.row_ids[number] for number in range(first, last + 1) if number in self.row_ids]
        found = self.handle.take_row_ids(wanted).select(self.table_layout.readable).to_arrow()
        rows = sorted(found.to_pylist(), key=lambda row: row[layout.PASSAGE])
        for row in rows:
            row[NUMBER] = row[layout.PASSAGE]
        return rows


def lookup(handle: Any, source: str) -> Any:
    """The passage number, passage count and row id of every row of `source` in a layout-2 table: one lookup in the
    `path` index. Not in the `passage` index too: its `passage = 0` alone holds a row per document of the table,
    so that a lookup in both cost 3.8 times as much at a million passages (docs/decisions.md, "A million
    passages"); the rows read are then taken by id."""
    import pyarrow.compute as pc

    where = pc.field(layout.PATH) == pc.scalar(source)
    return handle.search().where(where).select([layout.PASSAGE, layout.PASSAGES]).with_row_id().limit(None)


def check_text(name: str, value: str) -> None:
    """Refuse what no source or id can hold, naming the argument."""
    if "\x00" in value:
        raise InvalidRequest(f"{name} contains a NUL character; no document is named that way.")
    if not value.strip():
        raise InvalidRequest(f"{name} is empty; pass a hit's {name} as lancedb_search returns it.")


def find(
    handle: Any, table_layout: Layout, table: str, *, source: str | None = None, id: str | None = None
) -> tuple[Document, int | None]:
    """The document named by `source`, or the one holding passage `id` and that passage's number."""
    if id is not None:
        check_text("id", id)
        return _by_id(handle, table_layout, table, id)
    assert source is not None
    check_text("source", source)
    document = _by_source(handle, table_layout, table, source)
    if document is None:
        raise InvalidRequest(
            f"source {shown(source)} is not a document of table {shown(table)}. Pass a hit's `source` exactly as "
            "lancedb_search returns it (matched literally, without wildcards), or a hit's `id`."
        )
    return document, None


def _by_source(handle: Any, table_layout: Layout, table: str, source: str) -> Document | None:
    if indexed(table_layout):
        # Every row carries its document's passage count: passage 0's tells it.
        found = lookup(handle, source).to_arrow()
        numbers = found.column(layout.PASSAGE).to_pylist()
        if 0 not in numbers:
            return None
        total = int(found.column(layout.PASSAGES)[numbers.index(0)].as_py())
        row_ids = dict(zip(numbers, found.column("_rowid").to_pylist(), strict=True))
        return Document(table, source, total, "passage", handle, table_layout, row_ids=row_ids)
    found = _scanned_rows(handle, table_layout, table, source)
    if found is None:
        return None
    name, rows = found
    return Document(table, name, len(rows), _number(rows, name), handle, table_layout, rows)


def _by_id(handle: Any, table_layout: Layout, table: str, id: str) -> tuple[Document, int]:
    if indexed(table_layout):
        number = layout.passage_number(id)
        source = id.rpartition("#")[0]
        if number is None or not source:
            raise InvalidRequest(
                f"id {shown(id)} is not a passage id of table {shown(table)}: its ids are `path#N` (the document's "
                "path and the passage's number), as lancedb_search returns them."
            )
        document = _by_source(handle, table_layout, table, source)
        if document is None:
            raise InvalidRequest(
                f"id {shown(id)} names the document {shown(source)}, which is not in table {shown(table)}."
            )
        if number >= document.total:
            raise InvalidRequest(
                f"id {shown(id)} names passage {number}, but {shown(source)} has {_passages(document.total)}."
            )
        return document, number
    if table_layout.id is None:
        raise InvalidRequest(f"Table {shown(table)} has no id column; read a document by its source instead.")
    owner = _source_of_id(handle, table_layout, table_layout.id, id)
    if owner is None:
        raise InvalidRequest(
            f"id {shown(id)} is not a passage of table {shown(table)}; pass a hit's `id` from this table."
        )
    document = _by_source(handle, table_layout, table, owner)
    assert document is not None and document.rows is not None
    position = next(row[NUMBER] for row in document.rows if str(row.get(table_layout.id)) == id)
    return document, position


def _source_of_id(handle: Any, table_layout: Layout, id_column: str, id: str) -> str | None:
    """The source of the row whose id is `id` (compared as text, whatever the column's type), by a scan."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in batches(handle, list(dict.fromkeys([id_column, *table_layout.documents]))):
        same = pc.fill_null(pc.equal(batch.column(id_column).cast(pa.string()), pa.scalar(id, pa.string())), False)
        matches = pc.indices_nonzero(same)
        if len(matches):
            return document_of(batch.take(matches).slice(0, 1).to_pylist()[0], table_layout)
    return None


def _scanned_rows(handle: Any, table_layout: Layout, table: str, name: str) -> tuple[str, list[dict[str, Any]]] | None:
    """The document `name` names and its rows in table order (a pass over the table): the rows whose document is
    `name`, else, where a source may be shared (AnythingLLM's uploads), the rows whose source is `name` when they
    are one document's; an error when they are several documents'."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = pa.scalar(name, pa.string())
    shared = table_layout.documents != table_layout.sources
    matched: list[Any] = []
    for batch in batches(handle, table_layout.readable):
        documents = document_array(batch, table_layout)
        keep = pc.equal(documents, wanted)
        if shared:
            keep = pc.or_(keep, pc.equal(source_array(batch, table_layout), wanted))
        keep = pc.fill_null(keep, False)
        if pc.any(keep).as_py():
            matched.append(pa.Table.from_batches([batch]).filter(keep).append_column(DOCUMENT, documents.filter(keep)))
    if not matched:
        return None
    rows: list[dict[str, Any]] = pa.concat_tables(matched).to_pylist()
    named = [row for row in rows if row[DOCUMENT] == name]
    if not named:
        owners = sorted({row[DOCUMENT] for row in rows})
        if len(owners) > 1:
            raise _shared_source(table_layout, table, name, len(owners))
        name, named = owners[0], rows
    for position, row in enumerate(named):
        row[NUMBER] = position
    return name, named


def _shared_source(table_layout: Layout, table: str, source: str, count: int) -> InvalidRequest:
    first = table_layout.documents[0]
    other = "its title" if first == table_layout.title else f"its `{first}` (in a hit's metadata)"
    return InvalidRequest(
        f"source {shown(source)} is shared by {count} documents of table {shown(table)}, as AnythingLLM names every "
        f"upload alike. Read one by a hit's `id`, or by {other} as source."
    )


def _number(rows: list[dict[str, Any]], source: str) -> Order:
    """Number `rows` by their ids' N when every id is `source#N` and they run 0..n-1; else keep table order."""
    ids = [str(row.get(layout.ID) or "") for row in rows]
    numbers = [layout.passage_number(id) if id.startswith(f"{source}#") else None for id in ids]
    if sorted(number for number in numbers if number is not None) != list(range(len(rows))):
        return "table"
    for row, number in zip(rows, numbers, strict=True):
        row[NUMBER] = number
    rows.sort(key=lambda row: row[NUMBER])
    return "passage"


def _passages(count: int) -> str:
    return "1 passage (number 0)" if count == 1 else f"{count:,} passages (numbers 0 to {count - 1:,})"


def catalog(handle: Any, table_layout: Layout) -> list[tuple[str, str | None]]:
    """Every document of the table as (what names it, title), sorted by name: its source, or in an AnythingLLM
    table its url (`rows.document_of`).

    A layout-2 table lists its passages number 0 through the `passage` index (one row per document);
    any other table is scanned for its distinct documents, each with the title of its first row.
    """
    import pyarrow.compute as pc

    titles: dict[str, str | None] = {}
    columns = list(dict.fromkeys([*table_layout.documents, *([table_layout.title] if table_layout.title else [])]))
    if indexed(table_layout):
        first = pc.field(layout.PASSAGE) == pc.scalar(0)
        found = handle.search().where(first).select(columns).limit(None).to_arrow()
        scanned: Any = [found]
    else:
        scanned = batches(handle, columns)
    for batch in scanned:
        sources = pc.utf8_trim_whitespace(document_array(batch, table_layout)).to_pylist()
        names = batch.column(table_layout.title).to_pylist() if table_layout.title else [None] * len(sources)
        for source, title in zip(sources, names, strict=True):
            if source and source not in titles:
                titles[source] = (str(title).strip() or None) if title is not None else None
    return sorted(titles.items())
