"""The tools as plain functions over the read-only store, callable and testable without the MCP SDK.

`app.py` publishes them; the limits below are both checked here and declared in the input schemas there.
Tables are opened through `tables.Tables` only (which ones the caller sees); the status is `status.py`.
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

from lancelot_schema import languages
from lancelot_schema.settings import Settings
from lancelot_server import __version__, status
from lancelot_server.errors import InvalidRequest, LancelotError, VectorSearchUnavailable, shown
from lancelot_server.reading import documents, markdown, read
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
from lancelot_server.search import core, substring
from lancelot_server.search.core import Wanted
from lancelot_server.search.embed import Embedder
from lancelot_server.search.filters import NONE_KEPT, Filters, any_kept
from lancelot_server.search.fusion import HYBRID_DEPTH, fused_ranking
from lancelot_server.search.rows import Hit
from lancelot_server.storage.store import UNREADABLE_INDEX, Layout, Store, damage, describe
from lancelot_server.storage.tables import Tables, merged

MAX_QUERY = 2000
MIN_LIMIT, MAX_LIMIT = 1, 50
SEARCH_LIMIT, QUERY_LIMIT = 5, 8
MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET = 500, 100_000, 12_000
MODES: tuple[str, ...] = get_args(Mode)
# At most this many passages of one document in a reply, unless `perDocument` says otherwise.
DEFAULT_PER_DOCUMENT = 1

Outcome = tuple[list[Hit], SearchType, TextMatch | None, str | None]

log = structlog.get_logger("lancelot.tools")


def _check(query: str, mode: str, limit: int, per_document: int) -> None:
    if not query.strip():
        raise InvalidRequest("The query is empty. Pass the words or question to search for.")
    if len(query) > MAX_QUERY:
        raise InvalidRequest(f"The query has {len(query):,} characters; the limit is {MAX_QUERY:,}. Shorten it.")
    if mode not in MODES:
        raise InvalidRequest(f"Unknown mode {shown(mode)}; use one of {', '.join(MODES)}.")
    if not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"limit must be between {MIN_LIMIT} and {MAX_LIMIT}; got {limit}.")
    if not MIN_LIMIT <= per_document <= MAX_LIMIT:
        raise InvalidRequest(f"perDocument must be between {MIN_LIMIT} and {MAX_LIMIT}; got {per_document}.")


def _check_budget(budget: int) -> None:
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InvalidRequest(f"budget must be between {MIN_BUDGET:,} and {MAX_BUDGET:,} characters; got {budget}.")


class Query:
    """One search's query, embedded at most once however many tables want its vector (a failure too is kept)."""

    def __init__(self, text: str, embedder: Embedder) -> None:
        self.text = text
        self._embedder = embedder
        self._embedded: list[float] | VectorSearchUnavailable | None = None

    def embedding(self) -> list[float]:
        if self._embedded is None:
            try:
                self._embedded = self._embedder.embed(self.text)
            except VectorSearchUnavailable as exc:
                self._embedded = exc
        if isinstance(self._embedded, VectorSearchUnavailable):
            raise self._embedded
        return self._embedded


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
        self.protocol_versions = list(protocol_versions)

    def close(self) -> None:
        self.embedder.close()

    # lancedb_search ------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        mode: str = "auto",
        limit: int = SEARCH_LIMIT,
        table: str | Sequence[str] | None = None,
        path: str | None = None,
        per_document: int = DEFAULT_PER_DOCUMENT,
        filters: Filters | None = None,
    ) -> SearchReply:
        """One table, or several searched each in its own way and merged by rank (`tables.merged`); only passages
        of documents that `filters` keeps (their tags, dates and file types: `filters.py`)."""
        _check(query, mode, limit, per_document)
        filters = filters or Filters()
        # Every table is opened before any is searched: one the caller cannot have (or filter) refuses the request.
        opened = [self.opened(name) for name in self.tables.chosen(table)]
        for name, _handle, table_layout in opened:
            filters.require(table_layout, name)
        wanted = Wanted(limit, path or None, per_document, filters.condition())
        asked = Query(query, self.embedder)
        searched = []
        for name, handle, table_layout in opened:
            with self._naming_damage(handle, name):
                hits, search_type, text_match, note = self._run(handle, table_layout, asked, mode, wanted)
            named = [cast(SearchHit, {"table": name, **hit}) for hit in hits]
            searched.append(Searched(name, named, search_type, text_match, note))
        reply = _reply(query, mode, searched, limit)
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

    def _run(self, handle: Any, table_layout: Layout, query: Query, mode: str, wanted: Wanted) -> Outcome:
        """The search `mode` asks for, or the next one down (hybrid, vector, text) with a note saying why; `auto`
        goes straight to text search, without a note, on a table that has no vectors.

        The query leaves the machine (to the embedding endpoint) only on the vector and hybrid paths, and
        only once nothing known in advance (no vectors, no key, another model) rules them out.
        """
        note: str | None = None
        # `auto` on a table without vectors is keyless text search, as meant: nothing fell back, so no note.
        if mode != "text" and (mode != "auto" or table_layout.vector is not None):
            try:
                self.check_vectors(table_layout)
                if mode != "vector":
                    if core.has_fts_index(handle, table_layout.text):
                        return self._hybrid(handle, table_layout, query, wanted)
                    note = "hybrid search needs a full-text index, which the table lacks; used vector search instead."
                hits = self._vector(handle, table_layout, query, wanted)
                if hits or mode == "vector":
                    return hits, "vector", None, note
                note = "vector search found nothing; used text search instead."
            except VectorSearchUnavailable as exc:
                note = f"{exc}; used text search instead."
        hits, text_match, text_note = self._text(handle, table_layout, query, wanted)
        return hits, "text", text_match, _joined(note, text_note)

    def check_vectors(self, table_layout: Layout) -> None:
        """Raise `VectorSearchUnavailable` when vector search cannot work, before any query is sent."""
        if table_layout.vector is None:
            raise VectorSearchUnavailable("the table has no vector column (index it with `lancelot-index --embed`)")
        self.embedder.require()
        stamped = table_layout.stamped.get("embedding_model")
        model = self.settings.embedding_model
        if stamped is not None and stamped != model:
            raise VectorSearchUnavailable(
                f"the table's vectors come from {stamped} (width {table_layout.vector_width}) but queries would be "
                f"embedded with {model} (EMBEDDING_MODEL); vectors of different models cannot be compared"
            )

    def _embed(self, table_layout: Layout, query: Query) -> list[float]:
        embedding = query.embedding()
        if len(embedding) != table_layout.vector_width:
            raise VectorSearchUnavailable(
                f"vector search failed: {self.settings.embedding_model} gives vectors of width {len(embedding)} "
                f"but the table's {table_layout.vector!r} column has width {table_layout.vector_width}"
            )
        return embedding

    def _vector(self, handle: Any, table_layout: Layout, query: Query, wanted: Wanted) -> list[Hit]:
        return core.vector(handle, table_layout, self._embed(table_layout, query), wanted)

    def _hybrid(self, handle: Any, table_layout: Layout, query: Query, wanted: Wanted) -> Outcome:
        """BM25 (or substring) and vector hits fused by scaled score; score = fused relevance (0..1), higher is better.

        Both lists are `HYBRID_DEPTH` deep and uncapped; the per-document cap applies to the fused ranking, and
        the lists go four times deeper while it leaves the reply short and they may hold more.
        """
        embedding = self._embed(table_layout, query)
        depth = HYBRID_DEPTH
        while True:
            # Deeper lists while the cap leaves the fused reply short and either list may hold more.
            pool = wanted.pool(depth)
            nearest = core.vector(handle, table_layout, embedding, pool)
            matched, text_match, note = self._text(handle, table_layout, query, pool)
            complete = len(matched) < pool.limit  # every text match is listed: the rest score 0
            chosen = fused_ranking(matched, nearest, wanted.per_document, wanted.limit, every_match=complete)
            if len(chosen) >= wanted.limit or max(len(matched), len(nearest)) < pool.limit:
                break
            depth *= 4
        fused: list[Hit] = []
        for hit, score in chosen:
            hit = hit.copy()
            hit["score"] = round(score, 6)
            fused.append(hit)
        return fused, "hybrid", text_match, note

    def _text(
        self, handle: Any, table_layout: Layout, asked: Query, wanted: Wanted
    ) -> tuple[list[Hit], TextMatch, str | None]:
        note: str | None = None
        query = asked.text
        # Only the English index leaves stop words out (lancelot_schema.languages).
        common = core.only_stop_words(query) if table_layout.language == languages.DEFAULT else None
        if common is not None:
            # A substring match of "the" finds nearly every passage and ranks none: say so instead.
            listed = ", ".join(common[:5])
            why = f"the query holds only words so common that text search leaves them out ({listed})"
            return [], "bm25", f"{why}; add a word that says what to look for."
        indexed = core.fts_columns(handle)
        if table_layout.text in indexed:
            try:
                hits = core.bm25(handle, table_layout, query, wanted, indexed)
            except Exception:
                # Only a damaged index falls back; anything else (missing data too) is search()'s to name.
                if not damage(handle).index_broken(table_layout.text):
                    raise
                log.warning("full-text index damaged", column=table_layout.text)
                hits, note = [], f"{UNREADABLE_INDEX}; used substring search instead."
            if hits:
                return hits, "bm25", None
        if wanted.where is not None and not any_kept(handle, wanted.where):
            # The substring match would look through the whole table for nothing (a second at 100,000 passages).
            return [], "bm25", _joined(note, NONE_KEPT)
        # No index (an AnythingLLM table, --no-fts), or the tokenizer split the query into nothing useful.
        return substring.search(handle, table_layout, query, wanted), "substring", note

    # lancedb_query -------------------------------------------------------------------------------
    def query(
        self,
        query: str,
        mode: str = "auto",
        limit: int = QUERY_LIMIT,
        table: str | Sequence[str] | None = None,
        path: str | None = None,
        budget: int = DEFAULT_BUDGET,
        per_document: int = DEFAULT_PER_DOCUMENT,
        filters: Filters | None = None,
    ) -> str:
        _check_budget(budget)
        return markdown.render(self.search(query, mode, limit, table, path, per_document, filters), budget)

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
        return status.report(self)

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


def _reply(query: str, mode: str, searched: list[Searched], limit: int) -> SearchReply:
    """The reply to a search of one table (`table`) or of several (`tables`, hits merged by rank)."""
    lead = searched[0]
    reply: dict[str, Any] = {"query": query, "mode": mode, "searchType": lead.search_type}
    if lead.text_match is not None:
        reply["textMatch"] = lead.text_match
    named: dict[str, Any]
    if len(searched) == 1:
        note, hits, named = lead.note, lead.hits, {"table": lead.table}
    else:
        note = _joined(*(f"Table {shown(one.table)}: {one.note}" for one in searched if one.note))
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


def _joined(*notes: str | None) -> str | None:
    """Several notes as one text, each a sentence."""
    present = [note[0].upper() + note[1:] if index else note for index, note in enumerate(n for n in notes if n)]
    return " ".join(present) or None


@functools.cache  # what this process loaded: an upgrade meanwhile changes the files, not the running code
def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"
