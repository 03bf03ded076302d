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

A batch's new texts are embedded a slice at a time, and each slice's vectors are staged beside the table
(`writing/staged.py`) until the commit: a run stopped before it (a signal, `kill -9`, a request that failed
for good) leaves them there, and the next run of the same model looks up what the table lacks among them,
the same way, before it embeds anything. So an interrupted build loses at most a slice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from lancelot_indexer.documents.collect import Engine
from lancelot_indexer.embedding.embed import Embeddings, Limits, Retry, embed_texts, endpoint_host, joined, plan_batches
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

# Texts embedded between two appends to the staged vectors: what a stop loses at most. The local model runs one
# batch after another, so a slice costs it only the append (a small commit); 256 passages are seconds of two
# cores. The endpoint keeps `concurrency` requests in flight: a slice is that many full requests, twice over, so
# that waiting for a slice's last answer idles little.
LOCAL_SLICE = 256
REQUESTS_PER_SLICE = 2


class Staging(Protocol):
    """Where vectors are staged until the table's commit (`writing.staged.Staged`): `found`, what runs that did
    not finish staged (a Lance dataset of text_hash and vector, stamped), or None (also once removed)."""

    found: Any

    def add(self, rows: pa.Table) -> None: ...


@dataclass(frozen=True)
class EmbedReport:
    """For the summary: rows whose vectors were embedded now or reused, and what that cost; `resumed`: of the
    reused, those found among the vectors a stopped run staged."""

    model: str
    host: str
    width: int
    embedded: int
    reused: int
    requests: int
    resumed: int = 0


@dataclass(frozen=True)
class Reusable:
    """Vectors of the current table for some text hashes (`index[hash]` is a position in `vectors`)."""

    index: dict[str, int]
    vectors: Any  # pa.FixedSizeListArray of float32
    width: int


NOTHING = Reusable({}, None, 0)


def _then(first: Reusable, more: Reusable) -> Reusable:
    """`first`'s vectors, and `more`'s for the hashes `first` lacks, when their widths agree."""
    import pyarrow as pa

    if more.vectors is None or not more.index or (first.width and more.width != first.width):
        return first
    if first.vectors is None:
        return more
    offset = len(first.vectors)
    index = {digest: offset + at for digest, at in more.index.items()} | first.index
    return Reusable(index, pa.concat_arrays([first.vectors, more.vectors]), first.width)


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
        self.staged = 0  # texts whose vectors this run staged: a stop before the commit keeps them
        self._stored: tuple[Any, Stored] | None = None  # for the table it was made for
        self._staged: tuple[Any, Stored] | None = None  # for the staged vectors it was made for
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
            self.model,
            host,
            before.width or width,
            before.embedded,
            before.reused + rows,
            before.requests,
            before.resumed,
        )

    def extend(self, rows: pa.Table, current: Any, staged: Staging) -> tuple[pa.Table, dict[str, str]]:
        """Called once per batch of rows: reuses (from the table, then from `staged`), embeds, stages and counts
        (`report`) batch after batch."""
        # pyarrow here, not at import: the CLI builds the extension before the documents are read.
        import pyarrow as pa

        if self._stored is None or self._stored[0] is not current:
            self._stored = (current, Stored(current, self.model))
        if self._staged is None or self._staged[0] is not staged.found:
            self._staged = (staged.found, Stored(staged.found, self.model))
        hashes = rows.column(layout.TEXT_HASH).to_pylist()
        old = self._stored[1].lookup(hashes)
        in_table = len(old.index)
        if missing := [digest for digest in hashes if digest not in old.index]:
            old = _then(old, self._staged[1].lookup(missing))
        resumed = sum(1 for digest in missing if digest in old.index) if len(old.index) > in_table else 0
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
        embedded = self._embed(to_embed, list(fresh), staged, old.width or self._stored[1].width or None)
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
            before.resumed + resumed,
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

    def _embed(self, texts: list[str], hashes: list[str], staged: Staging, expected: int | None) -> Embeddings:
        """The vectors of `texts` (of `hashes`), a slice at a time, each slice's staged as soon as it is made."""
        import pyarrow as pa

        progress = self._progress(len(texts))
        parts = []
        for piece in self._slices(texts):
            some = texts[piece.start : piece.stop]
            if self.local is not None:
                part = self.local.embed(some, progress, expected)
            else:
                embed = embed_texts if self._engine is None else partial(embed_in_tasks, self._engine)
                part = embed(
                    some,
                    model=self.model,
                    api_key=self.api_key,
                    base_url=self.base_url,
                    concurrency=self.concurrency,
                    limits=self.limits,
                    retry=self.retry,
                    expected_width=expected,
                    progress=progress,
                )
            expected = expected or part.width or None
            parts.append(part)
            if part.width:
                stamp = {**self.settings(), layout.META_VECTOR_WIDTH: str(part.width)}
                column = pa.array(hashes[piece.start : piece.stop], pa.string())
                staged.add(
                    pa.table({layout.TEXT_HASH: column, layout.VECTOR: part.to_arrow()}).replace_schema_metadata(stamp)
                )
                self.staged += len(some)
                log.debug("staged", texts=len(some), staged=self.staged)
        return joined(parts, self.model, self.host)

    def _slices(self, texts: list[str]) -> list[range]:
        """`texts` in the slices embedded between two appends to the staged vectors."""
        if self.local is not None:
            return [range(start, min(start + LOCAL_SLICE, len(texts))) for start in range(0, len(texts), LOCAL_SLICE)]
        limits, many = self.limits or Limits(), self.concurrency * REQUESTS_PER_SLICE
        cap = Limits(limits.max_inputs * many, limits.max_input_tokens, limits.max_request_tokens * many)
        return plan_batches(texts, cap)

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
