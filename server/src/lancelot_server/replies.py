"""The shapes of the tools' replies. `app.py` publishes them as output schemas; tests check replies against them.

Field names are the contract with assistants (camelCase, as MCP itself): change them only with the README.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

# typing_extensions: pydantic (which derives the output schemas) needs its TypedDict before Python 3.12.
from typing_extensions import TypedDict

Mode = Literal["auto", "text", "vector", "hybrid"]
SearchType = Literal["text", "vector", "hybrid"]
TextMatch = Literal["bm25", "substring"]


# A passage as a search finds it: the hits of every ranking, and of the reply with their `table` (SearchHit).
class Hit(TypedDict):
    id: str | None
    title: str | None
    source: str | None
    heading: str | None
    text: str
    score: float
    metadata: dict[str, Any]
    passage: NotRequired[int]  # the passage's number in its document (layout 2)
    lines: NotRequired[list[int]]  # its first and last line in the source file
    anchor: NotRequired[str]  # the HTML id at or before it (`page.html#anchor`)
    page: NotRequired[int]  # the page it is on, from 1 (PDF; layout 5)
    url: NotRequired[str]  # where it is published, from the table's link template
    queries: NotRequired[list[int]]  # with `queries`: the positions (from 0) of the phrasings that found it


class SearchHit(Hit):
    table: str  # the table the hit comes from, also when one table was searched


class TableSearch(TypedDict):
    """How one of several tables was searched, and how many of the reply's hits it gave."""

    table: str
    searchType: SearchType
    textMatch: NotRequired[TextMatch]
    count: int


class SearchReply(TypedDict):
    """One table: `table` names it. Several: `tables` says how each was searched, `searchType` and `textMatch`
    are the first table's, and `note` names the table each of its sentences is about. Hits of several tables
    are in rank order (every table's first hit, then every table's second...): their scores stay per table.
    `query` is the one phrasing searched, `queries` the several (their hits fused, each hit naming its finders)."""

    query: NotRequired[str]
    queries: NotRequired[list[str]]
    mode: Mode
    searchType: SearchType
    textMatch: NotRequired[TextMatch]
    note: NotRequired[str]
    table: NotRequired[str]
    tables: NotRequired[list[TableSearch]]
    count: int
    hits: list[SearchHit]


class Cache(TypedDict):
    """What the server keeps of its tables in memory, for every table: at most `boundBytes` (LANCELOT_CACHE_MB;
    0: Lance's own defaults), `usedBytes` now."""

    boundBytes: int
    usedBytes: int


class DatabaseStatus(TypedDict):
    """`tables`: every table the database holds that the caller may see, served or not; `error`: why it cannot
    be read; `note`: what works now but may not elsewhere (a relative LANCEDB_PATH)."""

    path: str | None
    exists: bool
    tables: list[str]
    error: NotRequired[str]
    note: NotRequired[str]
    cache: NotRequired[Cache]


class Coverage(TypedDict):
    """Rows the full-text index of the text column covers, and rows it does not cover yet (searched by a scan)."""

    indexedRows: int
    unindexedRows: int


class Freshness(TypedDict):
    """How current a table is: `builtAt` and `source` as the indexer stamped them (None when not stamped),
    `documents` None for a table whose rows do not number their passages, `fullText` None without an index."""

    builtAt: str | None
    source: str | None
    version: int
    documents: int | None
    passages: int
    fullText: Coverage | None


class TableMetadata(TypedDict, total=False):
    """What lancelot-index stamped on a table (`layout.METADATA_KEYS` without their `lancelot.` prefix), each only
    when stamped: text as stamped, but `exclude`, the `--exclude` patterns the rows were read with, as a list."""

    layout_version: str
    indexer_version: str
    chunk_size: str
    indexed_at: str
    embedding_model: str
    vector_width: str
    embedding_host: str
    link_template: str
    language: str
    embedded: str
    exclude: list[str]
    source: str
    keep_generated: str
    description: str


class TableStatus(TypedDict):
    name: str
    exists: bool
    readable: NotRequired[bool]
    rows: NotRequired[int]
    columns: NotRequired[list[str]]
    textColumn: NotRequired[str]
    titleColumn: NotRequired[str | None]
    sourceColumns: NotRequired[list[str]]
    vectorColumn: NotRequired[str | None]
    vectorWidth: NotRequired[int | None]
    fullTextIndex: NotRequired[bool]
    language: NotRequired[str]
    documentReads: NotRequired[Literal["indexed", "scan"]]
    metadata: NotRequired[TableMetadata]
    description: NotRequired[str | None]  # what the indexer stamped the documents as (None: not stamped)
    freshness: NotRequired[Freshness]
    searchTypes: NotRequired[list[SearchType]]
    error: NotRequired[str]
    note: NotRequired[str]


class EmbeddingStatus(TypedDict):
    model: str
    endpoint: str
    apiKey: bool
    note: NotRequired[str]


class StatusReply(TypedDict):
    """`table` is the default table (of those the caller sees); `tables` every served table the caller sees."""

    database: DatabaseStatus
    table: TableStatus
    tables: list[TableStatus]
    embedding: EmbeddingStatus
    searchTypes: list[SearchType]
    version: str


class VersionReply(TypedDict):
    lancelot: str
    lancedb: str  # the lancedb package when installed beside the server ("not installed": it reads through Lance)
    lance: str  # pylance: the engine the server reads tables through (lance_table.py)
    pyarrow: str
    mcp: str
    python: str
    protocolVersions: list[str]
