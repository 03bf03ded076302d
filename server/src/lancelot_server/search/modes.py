"""The search a mode asks for, or the next one down with a note saying why: hybrid, vector, text.

    modes = Modes(settings, embedder)
    modes.run(handle, table_layout, Query(text, embedder), mode, wanted) -> (hits, search type, text match, note)
    modes.check_vectors(table_layout)        # VectorSearchUnavailable, before any query is sent

Text search is BM25 (`core.bm25`), else the substring match (`substring.py`); hybrid fuses BM25 (or substring)
and vector hits (`fusion.py`). `lancedb_status` lists the search types a table allows with `check_vectors`.
"""

from __future__ import annotations

import functools
from typing import Any

import structlog

from lancelot_schema import languages, local_models
from lancelot_schema.settings import Settings
from lancelot_server.errors import VectorSearchUnavailable
from lancelot_server.replies import Hit, SearchType, TextMatch
from lancelot_server.search import core, substring
from lancelot_server.search.core import Wanted
from lancelot_server.search.embed import Embedder
from lancelot_server.search.filters import NONE_KEPT, any_kept
from lancelot_server.search.fusion import HYBRID_DEPTH, fused_ranking
from lancelot_server.search.local_embed import LocalEmbedder, LocalEmbedders
from lancelot_server.search.rows import hit_document
from lancelot_server.storage.store import UNREADABLE_INDEX, Layout, damage

Outcome = tuple[list[Hit], SearchType, TextMatch | None, str | None]

log = structlog.get_logger("lancelot.search")


class Query:
    """One phrasing of a search, embedded at most once however many tables want its vector (a failure too is
    kept). `Query.several` gives a call's phrasings, embedded together in one request when the first is wanted."""

    def __init__(
        self, text: str, embedder: Embedder, *, together: _Embeddings | None = None, position: int = 0
    ) -> None:
        self.text = text
        self._together = together or _Embeddings([text], embedder)
        self._position = position

    @classmethod
    def several(cls, texts: list[str], embedder: Embedder) -> list[Query]:
        together = _Embeddings(texts, embedder)
        return [cls(text, embedder, together=together, position=at) for at, text in enumerate(texts)]

    def embedding(self, embedder: Embedder | LocalEmbedder | None = None) -> list[float]:
        """Its vector from `embedder` (default: the endpoint's), a table of local vectors asking for its model's."""
        return self._together.vectors(embedder)[self._position]


class _Embeddings:
    def __init__(self, texts: list[str], embedder: Embedder) -> None:
        self._texts = texts
        self._embedder = embedder
        # By embedder: tables of one call may hold vectors of the endpoint's model and of local ones.
        self._embedded: dict[int, list[list[float]] | VectorSearchUnavailable] = {}

    def vectors(self, embedder: Embedder | LocalEmbedder | None = None) -> list[list[float]]:
        chosen = embedder or self._embedder
        if id(chosen) not in self._embedded:
            try:
                self._embedded[id(chosen)] = chosen.embed_all(self._texts)
            except VectorSearchUnavailable as exc:
                self._embedded[id(chosen)] = exc
        embedded = self._embedded[id(chosen)]
        if isinstance(embedded, VectorSearchUnavailable):
            raise embedded
        return embedded


class Modes:
    """The searches of one server: its embedding model and endpoint, and the fallback from one mode to the next."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        self.settings = settings
        self.embedder = embedder
        self.local = LocalEmbedders(settings)

    def embedder_for(self, table_layout: Layout) -> Embedder | LocalEmbedder:
        """The local model a table's vectors were made with (stamped `local:NAME`), else the endpoint."""
        name = local_models.local_name(table_layout.stamped.get("embedding_model"))
        return self.local.get(name) if name is not None else self.embedder

    def run(self, handle: Any, table_layout: Layout, query: Query, mode: str, wanted: Wanted) -> Outcome:
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
        return hits, "text", text_match, joined(note, text_note)

    def check_vectors(self, table_layout: Layout) -> None:
        """Raise `VectorSearchUnavailable` when vector search cannot work, before any query is sent."""
        if table_layout.vector is None:
            raise VectorSearchUnavailable("the table has no vector column (index it with `lancelot-index --embed`)")
        embedder = self.embedder_for(table_layout)
        embedder.require()
        if isinstance(embedder, LocalEmbedder):
            return
        stamped = table_layout.stamped.get("embedding_model")
        model = self.settings.embedding_model
        if stamped is not None and stamped != model:
            raise VectorSearchUnavailable(
                f"the table's vectors come from {stamped} (width {table_layout.vector_width}) but queries would be "
                f"embedded with {model} (EMBEDDING_MODEL); vectors of different models cannot be compared"
            )

    def _embed(self, table_layout: Layout, query: Query) -> list[float]:
        embedder = self.embedder_for(table_layout)
        embedding = query.embedding(embedder)
        if len(embedding) != table_layout.vector_width:
            model = f"local:{embedder.name}" if isinstance(embedder, LocalEmbedder) else self.settings.embedding_model
            raise VectorSearchUnavailable(
                f"vector search failed: {model} gives vectors of width {len(embedding)} "
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
        document = functools.partial(hit_document, table_layout=table_layout)
        depth = HYBRID_DEPTH
        while True:
            # Deeper lists while the cap leaves the fused reply short and either list may hold more.
            pool = wanted.pool(depth)
            nearest = core.vector(handle, table_layout, embedding, pool)
            matched, text_match, note = self._text(handle, table_layout, query, pool)
            complete = len(matched) < pool.limit  # every text match is listed: the rest score 0
            chosen = fused_ranking(
                matched, nearest, wanted.per_document, wanted.limit, every_match=complete, document=document
            )
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
            # The substring match would look through the whole table for nothing (docs/decisions.md, search filters).
            return [], "bm25", joined(note, NONE_KEPT)
        # No index (an AnythingLLM table, --no-fts), or the tokenizer split the query into nothing useful.
        return substring.search(handle, table_layout, query, wanted), "substring", note


def joined(*notes: str | None) -> str | None:
    """Several notes as one text, each a sentence."""
    present = [note[0].upper() + note[1:] if index else note for index, note in enumerate(n for n in notes if n)]
    return " ".join(present) or None
