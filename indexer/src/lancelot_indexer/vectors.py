"""`--embed` as a pipeline `Extension`: reuse the vectors of unchanged chunks, embed only the rest.

A vector embeds its passage's text alone (`EMBEDDED`): with the title and heading trail before it,
vector search ranked better on every labelled set of bench-quality but hybrid search did not (see
docs/decisions.md, "Embedding context"). A row's `text_hash`, the hash of exactly what was embedded,
finds its vector in the current table when that table was embedded with the same model (and width) and
from the same kind of input (`lancelot.embedded`; a table without that stamp embedded its text, as now);
every other distinct text is embedded once, however many rows hold it. The vector column is then
assembled with one Arrow `take` over old and new vectors, and the model, width, endpoint host and input
are stamped in the metadata. An embedding failure raises before anything is written, so the current
table stays as it was. An unchanged folder therefore costs zero embedding requests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from lancelot_indexer.embed import Limits, Retry, embed_texts, endpoint_host
from lancelot_schema import layout

if TYPE_CHECKING:
    import pyarrow as pa

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
    """The current table's vectors by text hash (`index[hash]` is a position in `vectors`)."""

    index: dict[str, int]
    vectors: Any  # pa.FixedSizeListArray of float32
    width: int


NOTHING = Reusable({}, None, 0)


def reusable(current: Any, model: str) -> Reusable:
    """What can be copied from `current` (the table's Lance dataset, or None): only vectors of the same
    model, made from the same input as now (a table stamped with none, layouts 1 and 2, embedded its text)."""
    if current is None:
        return NOTHING
    import pyarrow as pa

    schema = current.schema
    stamped = layout.decode_metadata(schema.metadata)
    if stamped.get("embedding_model") != model or not {layout.TEXT_HASH, layout.VECTOR} <= set(schema.names):
        return NOTHING
    if stamped.get("embedded", layout.EMBEDDED_TEXT) != EMBEDDED:
        return NOTHING
    kind = schema.field(layout.VECTOR).type
    if not pa.types.is_fixed_size_list(kind):
        return NOTHING
    data = current.to_table(columns=[layout.TEXT_HASH, layout.VECTOR])
    vectors = data.column(layout.VECTOR).combine_chunks().cast(pa.list_(pa.float32(), kind.list_size))
    usable = vectors.is_valid().to_pylist()
    hashes = data.column(layout.TEXT_HASH).to_pylist()
    index = {digest: i for i, digest in enumerate(hashes) if digest is not None and usable[i]}
    return Reusable(index, vectors, kind.list_size)


class VectorExtension:
    """Adds the `vector` column to the rows the pipeline built; `report` says what it did."""

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
    ) -> None:
        self.model, self.api_key, self.base_url = model, api_key, base_url
        self.concurrency, self.on_progress = concurrency, on_progress
        self.limits, self.retry = limits, retry
        self.report: EmbedReport | None = None

    def extend(self, rows: pa.Table, current: Any) -> tuple[pa.Table, dict[str, str]]:
        # pyarrow here, not at import: the CLI builds the extension before the documents are read.
        import pyarrow as pa

        old = reusable(current, self.model)
        hashes = rows.column(layout.TEXT_HASH).to_pylist()
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
        log.info("embedding", texts=len(to_embed), reused=reused, model=self.model, host=endpoint_host(self.base_url))
        started = time.perf_counter()
        embedded = embed_texts(
            to_embed,
            model=self.model,
            api_key=self.api_key,
            base_url=self.base_url,
            concurrency=self.concurrency,
            limits=self.limits,
            retry=self.retry,
            expected_width=old.width or None,
            progress=self._progress(len(to_embed)),
        )
        seconds = round(time.perf_counter() - started, 3)
        log.info("embedded", texts=len(embedded), requests=embedded.stats.requests, seconds=seconds)
        width = embedded.width or old.width
        host = endpoint_host(self.base_url)
        self.report = EmbedReport(self.model, host, width, len(take) - reused, reused, embedded.stats.requests)
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
