"""`--embed` as a pipeline `Extension`: reuse the vectors of unchanged chunks, embed only the rest.

A vector embeds its passage's text alone (`EMBEDDED`): with the title and heading trail before it,
vector search ranked better on every labelled set of bench-quality but hybrid search did not (see
docs/decisions.md, "Embedding context"). A row's `text_hash`, the hash of exactly what was embedded,
finds its vector in the current table when that table was embedded with the same model (and width) and
from the same kind of input (`lancelot.embedded`; a table without that stamp embedded its text, as now);
every other distinct text of a batch is embedded once, however many rows hold it. The pipeline hands
rows over a batch at a time; each batch's vector column is assembled with one Arrow `take` over old and
new vectors, and the model, width, endpoint host and input are stamped in the metadata. An embedding
failure stops the run before the table's commit, so the current table stays as it was. An unchanged
folder therefore costs zero embedding requests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import structlog

from lancelot_indexer.documents.collect import Engine
from lancelot_indexer.embedding.embed import Limits, Retry, embed_texts, endpoint_host
from lancelot_indexer.embedding.tasks import embed_in_tasks
from lancelot_schema import layout

if TYPE_CHECKING:
    import pyarrow as pa

    from lancelot_indexer.embedding.local import LocalModel

log = structlog.get_logger("lancelot_indexer.vectors")

# on_progress(stage, done, total), as the pipeline calls it; the stage here is "embed".
Progress = Callable[[str, int, int], None]

# What each vector embeds, stamped as `lancelot.embedded`: a table stamped otherwise has all its vectors
# made again once, so that vectors of different inputs are never mixed in one table.
EMBEDDED = layout.EMBEDDED_TEXT


@dataclass(frozen=True)
class EmbedReport:
    """For the summary: rows whose vectors were embedded now or reused, and what that cost."""

    model: str
    host: str
    width: int
    embedded: int
    reused: int
    requests: int


@dataclass(frozen=True)
class Reusable:
    """Vectors of the current table for some text hashes (`index[hash]` is a position in `vectors`)."""

    index: dict[str, int]
    vectors: Any  # pa.FixedSizeListArray of float32
    width: int


NOTHING = Reusable({}, None, 0)


class Stored:
    """The current table's vectors by text hash, looked up a batch at a time: its hash column is read once,
    and only the vectors of a batch's hashes are taken (the whole vector column of a large table would not
    fit in memory)."""

    def __init__(self, current: Any, model: str) -> None:
        """`current`: the table's Lance dataset, or None. Only vectors of the same model, made from the same
        input as now (a table stamped with none, layouts 1 and 2, embedded its text) are used."""
        self._current: Any = None
        self._hashes: Any = None
        self.width = 0
        if current is None:
            return
        import pyarrow as pa

        schema = current.schema
        stamped = layout.decode_metadata(schema.metadata)
        if stamped.get("embedding_model") != model or not {layout.TEXT_HASH, layout.VECTOR} <= set(schema.names):
            return
        if stamped.get("embedded", layout.EMBEDDED_TEXT) != EMBEDDED:
            return
        kind = schema.field(layout.VECTOR).type
        if not pa.types.is_fixed_size_list(kind):
            return
        self._current, self.width = current, kind.list_size

    def lookup(self, hashes: list[str]) -> Reusable:
        """The stored vectors of `hashes` (those the table has, with a vector)."""
        if self._current is None:
            return NOTHING
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._hashes is None:
            self._hashes = self._current.to_table(columns=[layout.TEXT_HASH]).column(layout.TEXT_HASH).combine_chunks()
        wanted = pa.array(sorted(set(hashes)), pa.string())
        positions = pc.indices_nonzero(pc.is_in(self._hashes, value_set=wanted))
        found = self._current.take(positions, columns=[layout.VECTOR]).column(layout.VECTOR).combine_chunks()
        vectors = found.cast(pa.list_(pa.float32(), self.width))
        usable = vectors.is_valid().to_pylist()
        digests = self._hashes.take(positions).to_pylist()
        index = {digest: i for i, digest in enumerate(digests) if digest is not None and usable[i]}
        return Reusable(index, vectors, self.width)


class VectorExtension:
    """Adds the `vector` column to the rows the pipeline built; `report` says what it did.

    The vectors come from the endpoint (`model`, `api_key`, `base_url`), or from `local`, a model run here
    (`--embed local`), which then names the model and the host ("local"); reuse is the same for both.
    """

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None,
        concurrency: int = 4,
        on_progress: Progress | None = None,
        limits: Limits | None = None,
        retry: Retry | None = None,
        local: LocalModel | None = None,
    ) -> None:
        self.local = local
        self.model = local.name if local is not None else model
        self.api_key, self.base_url = api_key, base_url
        self.host = local.host if local is not None else endpoint_host(base_url)
        self.concurrency, self.on_progress = concurrency, on_progress
        self.limits, self.retry = limits, retry
        self.report: EmbedReport | None = None
        self._stored: tuple[Any, Stored] | None = None  # for the table it was made for
        self._engine: Engine | None = None

    def use(self, engine: Engine | None) -> None:
        """Embed in `engine`'s tasks (a Ray cluster: `tasks.py`) from now on; None: here."""
        self._engine = engine

    def settings(self) -> dict[str, str]:
        """What it stamps, known before any text is embedded: a table stamped otherwise is embedded anew."""
        return {
            layout.META_EMBEDDING_MODEL: self.model,
            layout.META_EMBEDDED: EMBEDDED,
            layout.META_EMBEDDING_HOST: self.host,
        }

    def kept(self, rows: int, width: int) -> None:
        """The rows an incremental rebuild kept: their vectors count as reused."""
        host = self.host
        before = self.report or EmbedReport(self.model, host, width, 0, 0, 0)
        self.report = EmbedReport(
            self.model, host, before.width or width, before.embedded, before.reused + rows, before.requests
        )

    def extend(self, rows: pa.Table, current: Any) -> tuple[pa.Table, dict[str, str]]:
        """Called once per batch of rows: reuses, embeds and counts (`report`) batch after batch."""
        # pyarrow here, not at import: the CLI builds the extension before the documents are read.
        import pyarrow as pa

        if self._stored is None or self._stored[0] is not current:
            self._stored = (current, Stored(current, self.model))
        hashes = rows.column(layout.TEXT_HASH).to_pylist()
        old = self._stored[1].lookup(hashes)
        texts = rows.column(layout.TEXT).to_pylist()
        fresh: dict[str, int] = {}  # hash -> position among the texts to embed
        to_embed: list[str] = []
        take: list[int] = []
        reused = 0
        offset = len(old.vectors) if old.vectors is not None else 0
        for digest, text in zip(hashes, texts, strict=True):
            if digest in old.index:
                take.append(old.index[digest])
                reused += 1
                continue
            if digest not in fresh:
                fresh[digest] = len(to_embed)
                to_embed.append(text)
            take.append(offset + fresh[digest])
        # Also for logs without a terminal (CI), where no progress bar is drawn: a long wait is announced.
        log.info("embedding", texts=len(to_embed), reused=reused, model=self.model, host=self.host)
        started = time.perf_counter()
        expected = self._stored[1].width or None
        if self.local is not None:
            embedded = self.local.embed(to_embed, self._progress(len(to_embed)), expected)
        else:
            embed = embed_texts if self._engine is None else partial(embed_in_tasks, self._engine)
            embedded = embed(
                to_embed,
                model=self.model,
                api_key=self.api_key,
                base_url=self.base_url,
                concurrency=self.concurrency,
                limits=self.limits,
                retry=self.retry,
                expected_width=expected,
                progress=self._progress(len(to_embed)),
            )
        seconds = round(time.perf_counter() - started, 3)
        log.info("embedded", texts=len(embedded), requests=embedded.stats.requests, seconds=seconds)
        width = embedded.width or old.width or self._stored[1].width
        host = self.host
        before = self.report or EmbedReport(self.model, host, width, 0, 0, 0)
        self.report = EmbedReport(
            self.model,
            host,
            width or before.width,
            before.embedded + len(take) - reused,
            before.reused + reused,
            before.requests + embedded.stats.requests,
        )
        if not width:  # no rows and nothing to reuse: no column to add
            return rows, {}
        parts = [part for part in (old.vectors, embedded.to_arrow() if len(embedded) else None) if part is not None]
        column = pa.concat_arrays(parts).take(pa.array(take, type=pa.int64()))
        rows = rows.append_column(pa.field(layout.VECTOR, column.type), column)
        stamp = {
            layout.META_EMBEDDING_MODEL: self.model,
            layout.META_VECTOR_WIDTH: str(width),
            layout.META_EMBEDDING_HOST: host,
            layout.META_EMBEDDED: EMBEDDED,
        }
        return rows, stamp

    def _progress(self, total: int) -> Callable[[int], None] | None:
        on_progress = self.on_progress
        if on_progress is None:
            return None
        lock = threading.Lock()
        done = 0

        def advance(more: int) -> None:
            nonlocal done
            with lock:
                done += more
                on_progress("embed", done, total)

        return advance
