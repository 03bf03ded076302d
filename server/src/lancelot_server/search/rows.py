"""Turn table rows into hits: text, title, source, heading, score, and everything else as metadata.

Rows written by AnythingLLM carry a `<document_metadata>` header at the top of their text (the
document's title, publication date, source); it is taken off the text and its fields join the metadata.
Rows lancelot-index wrote (layout 5) carry their document's own metadata as a JSON object (front matter,
HTML <meta>, PDF and Word properties): its fields join the metadata, and the columns derived from it for
the filters (its normalised tags and date) are left out.
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime, time
from typing import Any, cast

from typing_extensions import TypedDict

from lancelot_schema import layout, links
from lancelot_server.replies import Hit
from lancelot_server.storage.store import Layout

HEADER_OPEN = "<document_metadata>"
# The locator columns (layout 2; the page, layout 5): shown as a hit's own fields, not repeated in its metadata.
LOCATOR_COLUMNS = frozenset(
    (layout.PASSAGE, layout.PASSAGES, layout.LINE_START, layout.LINE_END, layout.ANCHOR, layout.PAGE)
)
HEADER_CLOSE = "</document_metadata>"
# Layout 5: the document's metadata (shown as its fields) and the filters' forms of it (not shown).
DOCUMENT_COLUMNS = frozenset((layout.META, layout.TAGS, layout.DATE))


class Locators(TypedDict, total=False):
    """Where a passage sits: what a hit and a read passage carry beside their text, when the table knows it."""

    passage: int
    lines: list[int]
    anchor: str
    page: int
    url: str


def split_header(text: str) -> tuple[str, dict[str, str]]:
    """AnythingLLM's header off `text`: the remaining text and the header's `key: value` fields."""
    if not text.startswith(HEADER_OPEN):
        return text, {}
    end = text.find(HEADER_CLOSE)
    if end < 0:
        return text, {}
    fields: dict[str, str] = {}
    for line in text[len(HEADER_OPEN) : end].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip()] = value.strip()
    return text[end + len(HEADER_CLOSE) :].lstrip("\r\n"), fields


def json_value(value: Any) -> Any:
    """A column value as JSON can carry it: dates as ISO text, bytes as hex, NaN as null."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    return str(value)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def locators(row: dict[str, Any], table_layout: Layout, source: str | None) -> Locators:
    """The row's passage number, line range, anchor, page and (with a link template) URL, each only when known."""
    found = Locators()
    number = row.get(table_layout.passage) if table_layout.passage else None
    if isinstance(number, int):
        found["passage"] = number
    start = row.get(table_layout.line_start) if table_layout.line_start else None
    end = row.get(table_layout.line_end) if table_layout.line_end else None
    if isinstance(start, int):
        found["lines"] = [start, end if isinstance(end, int) else start]
    anchor = _text(row.get(table_layout.anchor)) if table_layout.anchor else None
    if anchor:
        found["anchor"] = anchor
    # Layout 5; a table of an older layout has no such column, and its rows no such key.
    page = row.get(layout.PAGE) if layout.PAGE in table_layout.columns else None
    if isinstance(page, int):
        found["page"] = page
    template = table_layout.link_template
    if template and source:
        lines = found.get("lines")
        found["url"] = links.link(
            template,
            source,
            anchor=anchor,
            line=lines[0] if lines else None,
            line_end=lines[1] if lines else None,
            page=found.get("page"),
        )
    return found


def to_hit(row: dict[str, Any], table_layout: Layout, score: float) -> Hit:
    """One hit from one row (a column → value mapping, as `pyarrow.Table.to_pylist` gives)."""
    text, header = split_header(str(row.get(table_layout.text) or ""))
    source_column = next((name for name in table_layout.sources if _text(row.get(name))), None)
    shown = {
        table_layout.text,
        table_layout.id,
        table_layout.title,
        table_layout.heading,
        source_column,
        *LOCATOR_COLUMNS,
    }
    ours = _documented(table_layout)
    if ours:
        shown |= DOCUMENT_COLUMNS
    metadata = {
        name: json_value(value) for name, value in row.items() if name not in shown and not name.startswith("_")
    }
    for key, value in header.items():
        metadata.setdefault(key, value)
    if ours:
        for key, value in document_metadata(row.get(layout.META)).items():
            metadata.setdefault(key, value)
    source = _text(row.get(source_column)) if source_column else None
    hit = Hit(
        id=_text(row.get(table_layout.id)) if table_layout.id else None,
        title=_text(row.get(table_layout.title)) if table_layout.title else None,
        source=source,
        heading=_text(row.get(table_layout.heading)) if table_layout.heading else None,
        text=text,
        score=round(float(score), 6) if math.isfinite(score) else 0.0,
        metadata=metadata,
    )
    return cast(Hit, {**hit, **locators(row, table_layout, source)})


def hit_columns(table_layout: Layout) -> list[str]:
    """The columns `to_hit` shows something of: the readable ones but the document count and, in a table with
    document metadata, the filters' forms of it (`meta` holds the same). A take costs more with each column it
    reads, whatever the column holds."""
    unshown = {layout.PASSAGES, *((layout.TAGS, layout.DATE) if _documented(table_layout) else ())}
    return [name for name in table_layout.readable if name not in unshown]


def _documented(table_layout: Layout) -> bool:
    """Whether the table holds lancelot-index's document metadata columns (layout 5)."""
    return DOCUMENT_COLUMNS.issubset(table_layout.columns)


def document_metadata(meta: Any) -> dict[str, Any]:
    """The fields of a `meta` value: a JSON object as the indexer wrote it; anything else has none."""
    if not isinstance(meta, str) or not meta:
        return {}
    try:
        fields = json.loads(meta)
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


def source_of(row: dict[str, Any], table_layout: Layout) -> str | None:
    """The hit's source without building the hit: for the `path` prefix filter."""
    return _first(row, table_layout.sources)


def document_of(row: dict[str, Any], table_layout: Layout) -> str | None:
    """What names the row's document (`Layout.documents`): its source, or in an AnythingLLM table its url."""
    return _first(row, table_layout.documents)


def hit_document(hit: Hit, table_layout: Layout) -> str | None:
    """`document_of` for a hit: the title is its title, the source columns its source, the others its metadata."""
    for name in table_layout.documents:
        if name in table_layout.sources:
            return hit["source"]  # the first source that is not blank, as `document_of` goes on to find it
        value = _text(hit["title"] if name == table_layout.title else hit["metadata"].get(name))
        if value:
            return value
    return None


def _first(row: dict[str, Any], columns: tuple[str, ...]) -> str | None:
    for name in columns:
        value = _text(row.get(name))
        if value:
            return value
    return None
