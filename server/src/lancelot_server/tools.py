"""The tools as plain functions over the read-only store, callable and testable without the MCP SDK.

`app.py` publishes them; the limits below are both checked here and declared in the input schemas there.
Tables are opened through `storage.tables.Tables` only (which ones the caller sees); each table is searched
in the mode asked or the next one down by `search.modes`; the status is `status.py`.
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import Any, cast, get_args

import structlog

from lancelot_schema.settings import Settings
from lancelot_server import __version__, status
from lancelot_server.errors import InvalidRequest, LancelotError, shown
from lancelot_server.reading import documents, markdown, read
from lancelot_server.reading.read import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from lancelot_server.replies import (
    Mode,
    SearchHit,
    SearchReply,
    SearchType,
    StatusReply,
    TableSearch,
    TextMatch,
    VersionReply,
)
from lancelot_server.search import phrasings
from lancelot_server.search.core import Wanted
from lancelot_server.search.embed import Embedder
from lancelot_server.search.filters import Filters
from lancelot_server.search.modes import Modes, Query, joined
from lancelot_server.storage.store import Layout, Store, damage, describe
from lancelot_server.storage.tables import Tables, merged

MAX_QUERY = 2000
# Most phrasings one search takes (`queries`): the assistant's own rewrites of what it looks for.
MAX_QUERIES = 5
MIN_LIMIT, MAX_LIMIT = 1, 50
SEARCH_LIMIT, QUERY_LIMIT = 5, 8
MODES: tuple[str, ...] = get_args(Mode)
# At most this many passages of one document in a reply, unless `perDocument` says otherwise.
DEFAULT_PER_DOCUMENT = 1

log = structlog.get_logger("lancelot.tools")


def _phrasings(query: str | None, queries: Sequence[str] | None) -> list[str]:
    """The phrasings to search: `query` alone or every one of `queries`, refused unless exactly one is given and
    every phrasing fits (not blank, at most MAX_QUERY characters, `queries` 1 to MAX_QUERIES distinct ones)."""
    several = f"queries (a list of 1 to {MAX_QUERIES} phrasings: keywords, a question, a name)"
    if query is not None and queries is not None:
        raise InvalidRequest(f"Pass query or queries, not both: query for one phrasing, {several}.")
    if query is None and queries is None:
        raise InvalidRequest(f"Nothing to search for. Pass query (the words or question to search for) or {several}.")
    if queries is None:
        _check_phrasing(cast(str, query), "The query")
        return [cast(str, query)]
    if not queries:
        raise InvalidRequest(f"queries is empty. Pass 1 to {MAX_QUERIES} phrasings, or query for one.")
    if len(queries) > MAX_QUERIES:
        raise InvalidRequest(
            f"queries has {len(queries):,} phrasings; the limit is {MAX_QUERIES}. "
            f"Keep the {MAX_QUERIES} that differ most."
        )
    trimmed: list[str] = []
    for position, phrasing in enumerate(queries):
        _check_phrasing(phrasing, f"queries[{position}]")
        if phrasing.strip() in trimmed:
            first = trimmed.index(phrasing.strip())
            raise InvalidRequest(
                f"queries[{position}] repeats queries[{first}] (the same once trimmed); each phrasing must differ: "
                "drop the repeat or reword it."
            )
        trimmed.append(phrasing.strip())
    return list(queries)


def _check_phrasing(phrasing: str, name: str) -> None:
    if not phrasing.strip():
        raise InvalidRequest(f"{name} is empty. Pass the words or question to search for.")
    if len(phrasing) > MAX_QUERY:
        raise InvalidRequest(f"{name} has {len(phrasing):,} characters; the limit is {MAX_QUERY:,}. Shorten it.")


def _check(mode: str, limit: int, per_document: int) -> None:
    if mode not in MODES:
        raise InvalidRequest(f"Unknown mode {shown(mode)}; use one of {', '.join(MODES)}.")
    if not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"limit must be between {MIN_LIMIT} and {MAX_LIMIT}; got {limit}.")
    if not MIN_LIMIT <= per_document <= MAX_LIMIT:
        raise InvalidRequest(f"perDocument must be between {MIN_LIMIT} and {MAX_LIMIT}; got {per_document}.")


def _check_budget(budget: int) -> None:
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InvalidRequest(f"budget must be between {MIN_BUDGET:,} and {MAX_BUDGET:,} characters; got {budget}.")


@dataclass(frozen=True)
class Searched:
    """What one table gave a search: its hits (each naming the table) and how they were found."""

    table: str
    hits: list[SearchHit]
    search_type: SearchType
    text_match: TextMatch | None
    note: str | None


class Tools:
    """What the server answers, bound to one store and one set of settings."""

    def __init__(self, store: Store, settings: Settings, protocol_versions: Sequence[str] = ()) -> None:
        self.store = store
        self.settings = settings
        self.tables = Tables(store, settings)
        self.embedder = Embedder(settings)
        self.modes = Modes(settings, self.embedder)
        self.protocol_versions = list(protocol_versions)

    def close(self) -> None:
        self.embedder.close()

    # lancedb_search ------------------------------------------------------------------------------
    def search(
        self,
        query: str | None = None,
        mode: str = "auto",
        limit: int = SEARCH_LIMIT,
        table: str | Sequence[str] | None = None,
        path: str | None = None,
        per_document: int = DEFAULT_PER_DOCUMENT,
        filters: Filters | None = None,
        queries: Sequence[str] | None = None,
    ) -> SearchReply:
        """One table, or several searched each in its own way and merged by rank (`tables.merged`); only passages
        of documents that `filters` keeps (their tags, dates and file types: `filters.py`). `query` is one
        phrasing; `queries` several, each searched and their hits fused per table (`search.phrasings`)."""
        texts = _phrasings(query, queries)
        _check(mode, limit, per_document)
        filters = filters or Filters()
        # Every table is opened before any is searched: one the caller cannot have (or filter) refuses the request.
        opened = [self.opened(name) for name in self.tables.chosen(table)]
        for name, _handle, table_layout in opened:
            filters.require(table_layout, name)
        wanted = Wanted(limit, path or None, per_document, filters.condition())
        asked = Query.several(texts, self.embedder)
        searched = []
        for name, handle, table_layout in opened:
            with self._naming_damage(handle, name):
                if queries is None:
                    outcome = self.modes.run(handle, table_layout, asked[0], mode, wanted)
                else:
                    outcome = phrasings.run(self.modes, handle, table_layout, asked, mode, wanted)
            hits, search_type, text_match, note = outcome
            named = [cast(SearchHit, {"table": name, **hit}) for hit in hits]
            searched.append(Searched(name, named, search_type, text_match, note))
        reply = _reply({"query": query} if queries is None else {"queries": texts}, mode, searched, limit)
        log.debug("search", tables=[one.table for one in searched], mode=mode, count=reply["count"])
        return reply

    def opened(self, name: str) -> tuple[str, Any, Layout]:
        """The table's name, handle and layout, if the caller sees it (else refused as missing). The handle is
        pinned to the version the table is at now, for every read of this request (`LanceTable.pinned`)."""
        handle = self.tables.open(name, pinned=True)
        text_column = self.settings.text_column
        table_layout = handle.kept(("layout", text_column), lambda dataset: describe(dataset.schema, text_column, name))
        return name, handle, table_layout

    @contextmanager
    def _naming_damage(self, handle: Any, name: str) -> Iterator[None]:
        """Lance reports a missing file as a bare RuntimeError mid-query; name the damage when it is that
        (and an object store that refuses or cannot be reached, as the store names it)."""
        try:
            with self.store.reading():
                yield
        except LancelotError:
            raise
        except Exception as exc:
            found = damage(handle)
            if not found.missing:
                raise
            log.warning("table damaged", table=name, missing=list(found.missing))
            raise self.store.unreadable(name, found) from exc

    # lancedb_query -------------------------------------------------------------------------------
    def query(
        self,
        query: str | None = None,
        mode: str = "auto",
        limit: int = QUERY_LIMIT,
        table: str | Sequence[str] | None = None,
        path: str | None = None,
        budget: int = DEFAULT_BUDGET,
        per_document: int = DEFAULT_PER_DOCUMENT,
        filters: Filters | None = None,
        queries: Sequence[str] | None = None,
    ) -> str:
        _check_budget(budget)
        found = self.search(query, mode, limit, table, path, per_document, filters, queries)
        return markdown.render(found, budget, filters, path)

    # lancedb_read --------------------------------------------------------------------------------
    def read(
        self,
        id: str | None = None,
        source: str | None = None,
        table: str | None = None,
        before: int | None = None,
        after: int | None = None,
        start: int | None = None,
        offset: int | None = None,
        budget: int = DEFAULT_BUDGET,
    ) -> read.Reading:
        """A passage and its neighbours (`id`), or a document from passage `start` on (`source`)."""
        read.check_arguments(id, source, before, after, start, offset)
        _check_budget(budget)
        name, handle, table_layout = self.opened(table or self.tables.default())
        with self._naming_damage(handle, name):
            document, number = documents.find(handle, table_layout, name, source=source, id=id)
            if number is not None:
                before = read.DEFAULT_BEFORE if before is None else before
                after = read.DEFAULT_AFTER if after is None else after
                return read.around(document, number, before, after, budget, table)
            return read.onward(document, start or 0, offset or 0, budget, table)

    # lancedb_status ------------------------------------------------------------------------------
    def status(self) -> StatusReply:
        return status.report(self.settings, self.store, self.tables, self.modes)

    # lancedb_version -----------------------------------------------------------------------------
    def version(self) -> VersionReply:
        return VersionReply(
            lancelot=__version__,
            lancedb=_installed("lancedb"),
            lance=_installed("pylance"),
            pyarrow=_installed("pyarrow"),
            mcp=_installed("mcp"),
            python=platform.python_version(),
            protocolVersions=self.protocol_versions,
        )


def _reply(asked: dict[str, Any], mode: str, searched: list[Searched], limit: int) -> SearchReply:
    """The reply to a search of one table (`table`) or of several (`tables`, hits merged by rank); `asked` is
    `query` or `queries`, as the call gave it."""
    lead = searched[0]
    reply: dict[str, Any] = {**asked, "mode": mode, "searchType": lead.search_type}
    if lead.text_match is not None:
        reply["textMatch"] = lead.text_match
    named: dict[str, Any]
    if len(searched) == 1:
        note, hits, named = lead.note, lead.hits, {"table": lead.table}
    else:
        note = joined(*(f"Table {shown(one.table)}: {one.note}" for one in searched if one.note))
        hits = merged([one.hits for one in searched], limit)
        named = {"tables": [_table_search(one, hits) for one in searched]}
    if note is not None:
        reply["note"] = note
    reply |= named
    reply["count"], reply["hits"] = len(hits), hits
    return cast(SearchReply, reply)


def _table_search(one: Searched, hits: list[SearchHit]) -> TableSearch:
    searched: dict[str, Any] = {"table": one.table, "searchType": one.search_type}
    if one.text_match is not None:
        searched["textMatch"] = one.text_match
    searched["count"] = sum(1 for hit in hits if hit["table"] == one.table)
    return cast(TableSearch, searched)


@functools.cache  # what this process loaded: an upgrade meanwhile changes the files, not the running code
def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"
