"""Embed chunk texts through the OpenAI API or any OpenAI-compatible endpoint (`OPENAI_BASE_URL`).

Texts go out in batches (at most 2,048 inputs and a bounded token estimate per request), several
requests at a time. Each request is retried with exponential backoff and full jitter on 429, 5xx,
timeouts and dropped connections, honouring `Retry-After`; the openai client's own retries are off so
these are the only ones. A text longer than the model's input limit is split, and the vectors of its
parts are averaged (weighted by length) and renormalised: nothing is cut off. The first request that
fails for good stops the run with an `EmbeddingError` that names the cause.

Vectors come back as one flat float32 array, a tenth of the memory of Python lists (docs/decisions.md,
"Indexer: embedding requests"). The openai package is imported on first use. Requests and retries: `embed_request`.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from lancelot_indexer.embedding.embed_request import Caller, EmbedStats, Retry, Stopped, endpoint_host, make_client
from lancelot_indexer.errors import EmbeddingKeyError, EmbeddingWidthError

__all__ = ["EmbedStats", "Embeddings", "Limits", "Retry", "embed_texts", "endpoint_host", "joined", "split_text"]

# OpenAI's limits for every embedding model: inputs per request, tokens per input, tokens per request.
MAX_INPUTS = 2048
MAX_INPUT_TOKENS = 8192
MAX_REQUEST_TOKENS = 300_000
# What we put in one request: a third of OpenAI's cap, so that a request stays short on a slow endpoint
# too (a local CPU model, docs/decisions.md) and a retry resends little.
REQUEST_TOKEN_BUDGET = 100_000
# The estimate must never fall below the real count. BPE tokenizers give about 4 bytes a token for
# English and 3 for code; 2 covers CJK, emoji and digit runs as well, without a tokenizer.
BYTES_PER_TOKEN = 2


def estimate_tokens(text: str) -> int:
    """A deliberately high token count for `text`, used to stay inside the endpoint's limits."""
    return max(1, math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN))


@dataclass(frozen=True)
class Limits:
    """What one request may carry. Lower them for endpoints with smaller models (e.g. 512 tokens)."""

    max_inputs: int = MAX_INPUTS
    max_input_tokens: int = MAX_INPUT_TOKENS
    max_request_tokens: int = REQUEST_TOKEN_BUDGET

    def __post_init__(self) -> None:
        if not 0 < self.max_input_tokens <= self.max_request_tokens or self.max_inputs < 1:
            raise ValueError(f"inconsistent embedding limits: {self}")


@dataclass
class Embeddings:
    """The vectors of the texts, in order, as one flat float32 array of `len(self) * width` values."""

    flat: array[float]
    width: int
    model: str
    host: str
    stats: EmbedStats

    def __len__(self) -> int:
        return len(self.flat) // self.width if self.width else 0

    def __getitem__(self, index: int) -> list[float]:
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.flat[index * self.width : (index + 1) * self.width].tolist()

    def to_arrow(self) -> Any:
        """The vectors as a pyarrow `FixedSizeListArray` of float32, without copying them."""
        import pyarrow as pa

        values = pa.Array.from_buffers(pa.float32(), len(self.flat), [None, pa.py_buffer(self.flat)])
        return pa.FixedSizeListArray.from_arrays(values, self.width)


def joined(parts: Sequence[Embeddings], model: str, host: str) -> Embeddings:
    """The vectors of consecutive parts of some texts, as those of the whole, in order; their costs added."""
    flat, stats, width = array("f"), EmbedStats(), 0
    for part in parts:
        if width and part.width and part.width != width:
            raise EmbeddingWidthError(f"{model} at {host} gave vectors of differing widths {width} and {part.width}")
        width = width or part.width
        flat.extend(part.flat)
        stats.add(part.stats)
    return Embeddings(flat=flat, width=width, model=model, host=host, stats=stats)


def split_text(text: str, max_tokens: int) -> list[str]:
    """`text` in consecutive parts of at most `max_tokens` (estimated), cut at whitespace when possible.

    Joined, the parts give back `text` exactly.
    """
    data = text.encode("utf-8")
    limit = max_tokens * BYTES_PER_TOKEN
    parts: list[str] = []
    start = 0
    while len(data) - start > limit:
        cut = start + limit
        while data[cut] & 0xC0 == 0x80:  # never inside a character
            cut -= 1
        space = max(data.rfind(b, start + limit // 2, cut) for b in (b" ", b"\n", b"\t"))
        if space > start:
            cut = space + 1
        parts.append(data[start:cut].decode("utf-8"))
        start = cut
    parts.append(data[start:].decode("utf-8"))
    return parts


def embed_texts(
    texts: Sequence[str],
    *,
    model: str,
    api_key: str | None,
    base_url: str | None,
    concurrency: int = 4,
    timeout: float = 120.0,
    limits: Limits | None = None,
    retry: Retry | None = None,
    expected_width: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Embeddings:
    """Embed `texts` with `model`; `progress(n)` is called (from a worker thread) as n more texts are done.

    `api_key` may be None for an endpoint that needs none (`base_url` given); OpenAI itself needs one.
    `expected_width` (the width of vectors reused from the current table) is checked too.
    Raises an `EmbeddingError` subclass naming the cause when a request fails for good.
    """
    limits, retry = limits or Limits(), retry or Retry()
    host = endpoint_host(base_url)
    if texts and api_key is None and base_url is None:  # nothing to embed needs no key
        raise EmbeddingKeyError(
            f"--embed needs an API key for {host}: set OPENAI_API_KEY or store one with lancelot-init "
            "(or point OPENAI_BASE_URL at an endpoint that needs none)"
        )
    if any(not text for text in texts):
        raise ValueError("cannot embed an empty text")
    inputs: list[str] = []
    owners: list[int] = []
    stats = EmbedStats()
    for number, text in enumerate(texts):
        parts = split_text(text, limits.max_input_tokens)
        stats.split_texts += len(parts) > 1
        inputs.extend(parts)
        owners.extend([number] * len(parts))
    if not inputs:
        return Embeddings(flat=array("f"), width=0, model=model, host=host, stats=stats)
    batches = plan_batches(inputs, limits, concurrency)
    call = Caller(model=model, host=host, retry=retry, client=make_client(api_key, base_url, timeout))
    try:
        vectors = _run(call, inputs, owners, batches, concurrency, progress, stats)
    finally:
        call.client.close()
    width = len(vectors[0]) if vectors else 0
    if expected_width is not None and width and width != expected_width:
        raise EmbeddingWidthError(
            f"{model} at {host} gives vectors of width {width}, but the table's vectors are {expected_width} wide"
        )
    flat = _combine(vectors, owners, inputs, len(texts), width, stats)
    return Embeddings(flat=flat, width=width, model=model, host=host, stats=stats)


def plan_batches(inputs: Sequence[str], limits: Limits, concurrency: int = 1) -> list[range]:
    """Consecutive runs of `inputs`, each within `limits`; at least `concurrency` runs when there are
    enough inputs, so that every worker has something to do."""
    cap = min(limits.max_inputs, max(1, math.ceil(len(inputs) / max(1, concurrency))))
    batches: list[range] = []
    start, tokens = 0, 0
    for index, text in enumerate(inputs):
        cost = estimate_tokens(text)
        if index > start and (index - start >= cap or tokens + cost > limits.max_request_tokens):
            batches.append(range(start, index))
            start, tokens = index, 0
        tokens += cost
    if start < len(inputs):
        batches.append(range(start, len(inputs)))
    return batches


def _run(
    call: Caller,
    inputs: list[str],
    owners: list[int],
    batches: list[range],
    concurrency: int,
    progress: Callable[[int], None] | None,
    stats: EmbedStats,
) -> list[array[float]]:
    vectors: list[array[float]] = [array("f")] * len(inputs)
    remaining: dict[int, int] = {}
    for owner in owners:
        remaining[owner] = remaining.get(owner, 0) + 1
    lock = threading.Lock()

    def one(batch: range) -> None:
        if call.stop.is_set():
            raise Stopped("stopped: another embedding request failed")
        try:
            got = call.embed([inputs[i] for i in batch], stats, lock)
        except BaseException:
            call.stop.set()  # waiting retries give up; queued batches never send
            raise
        done = 0
        with lock:
            for i, vector in zip(batch, got, strict=True):
                vectors[i] = vector
                remaining[owners[i]] -= 1
                done += remaining[owners[i]] == 0
        if progress is not None and done:
            progress(done)

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="embed") as pool:
        futures: list[Future[None]] = [pool.submit(one, batch) for batch in batches]
        finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in finished if f.exception() is not None), None)
        if failed is not None:
            for future in futures:
                future.cancel()
            raise _first_error(futures, failed)
    return vectors


def _first_error(futures: list[Future[None]], failed: Future[None]) -> BaseException:
    """The error to report: a specific one (key, model) over the generic 'stopped' of other workers."""
    errors = [f.exception() for f in futures if f.done() and not f.cancelled() and f.exception() is not None]
    specific = [e for e in errors if e is not None and not isinstance(e, Stopped)]
    return specific[0] if specific else failed.exception() or RuntimeError("embedding stopped")


def _combine(
    vectors: list[array[float]], owners: list[int], inputs: list[str], count: int, width: int, stats: EmbedStats
) -> array[float]:
    """One vector per text. A split text's parts are averaged by length, then scaled to their mean norm
    (unit length for normalised models, whose vectors stay comparable by L2 and cosine alike)."""
    if any(len(vector) != width for vector in vectors):
        found = sorted({len(vector) for vector in vectors})
        raise EmbeddingWidthError(f"the endpoint answered vectors of differing widths {found} in one run")
    flat = array("f")
    if stats.split_texts == 0:
        for vector in vectors:
            flat.extend(vector)
        return flat
    parts: list[list[int]] = [[] for _ in range(count)]
    for index, owner in enumerate(owners):
        parts[owner].append(index)
    for indexes in parts:
        if len(indexes) == 1:
            flat.extend(vectors[indexes[0]])
            continue
        total = [0.0] * width
        norms = []
        for index in indexes:
            weight = len(inputs[index])
            norms.append(math.sqrt(math.fsum(value * value for value in vectors[index])))
            for position, value in enumerate(vectors[index]):
                total[position] += weight * value
        scale = (math.fsum(norms) / len(norms)) / (math.sqrt(math.fsum(value * value for value in total)) or 1.0)
        flat.extend(value * scale for value in total)
    return flat
