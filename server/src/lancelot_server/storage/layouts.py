"""Which columns of a table play which part in a hit, from its Arrow schema (the manifest's: no request).

`describe(schema, text_column, table)` gives the `Layout`; a table without the text column cannot be searched.
Part of the store's surface (`store.Layout`, `store.describe`), kept apart to keep the store small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lancelot_schema import languages, layout
from lancelot_server.errors import TableLayoutError, shown


@dataclass(frozen=True)
class Layout:
    """Which columns of a table play which part in a hit."""

    columns: tuple[str, ...]
    text: str
    id: str | None
    title: str | None
    heading: str | None
    sources: tuple[str, ...]
    # What names a row's document, the first that is not blank: its sources, or in an AnythingLLM table its url and
    # title first (`layout.ANYTHINGLLM_DOCUMENT_COLUMNS`).
    documents: tuple[str, ...]
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
        """Every column a hit or a read is built from: all but the vectors, which are large and meaningless to read,
        and, in a table lancelot-index stamped, its bookkeeping (`layout.BOOKKEEPING`); another tool's table shows
        every other column as metadata."""
        hidden = layout.BOOKKEEPING if self.stamped.get("layout_version") else ()
        return [name for name in self.columns if name not in self.vectors and name not in hidden]


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


def describe(schema: Any, text_column: str, table: str) -> Layout:
    """The layout of a table from its Arrow schema; a table without the text column cannot be searched."""
    names = tuple(schema.names)
    if text_column not in names:
        raise TableLayoutError(
            f"Table {shown(table)} has no text column {text_column!r} (LANCEDB_TEXT_COLUMN); its columns are "
            f"{', '.join(names)}. Set LANCEDB_TEXT_COLUMN to the column that holds the passages."
        )
    import pyarrow as pa

    kind = schema.field(text_column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise TableLayoutError(
            f"Table {shown(table)} has a column {text_column!r} (LANCEDB_TEXT_COLUMN), but it holds {kind}, not text. "
            "Set LANCEDB_TEXT_COLUMN to the column that holds the passages."
        )
    sources = tuple(name for name in layout.SOURCE_COLUMNS if name in names)
    stamped = layout.decode_metadata(schema.metadata)
    documents = sources
    if not stamped.get("layout_version") and any(name != layout.PATH for name in sources):
        documents = (*(name for name in layout.ANYTHINGLLM_DOCUMENT_COLUMNS if name in names), *sources)
    return Layout(
        columns=names,
        text=text_column,
        id=layout.ID if layout.ID in names else None,
        title=layout.TITLE if layout.TITLE in names else None,
        heading=layout.HEADING if layout.HEADING in names else None,
        sources=sources,
        documents=documents,
        vectors=_vector_widths(schema),
        stamped=stamped,
        passage=_present(layout.PASSAGE, names),
        passages=_present(layout.PASSAGES, names),
        line_start=_present(layout.LINE_START, names),
        line_end=_present(layout.LINE_END, names),
        anchor=_present(layout.ANCHOR, names),
    )


def _present(column: str, names: tuple[str, ...]) -> str | None:
    return column if column in names else None
