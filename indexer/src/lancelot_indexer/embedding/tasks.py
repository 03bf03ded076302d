"""`--embed` with `--ray`: the texts of a batch embedded in Ray tasks, by the local path's own `embed_texts`.

    embed_in_tasks(engine, texts, concurrency=4, progress=None, model=..., api_key=..., ...) -> Embeddings

`vectors.py` decides, on the driver as locally, which texts need a vector (those it cannot reuse from the
current table, each distinct text once) and calls this in place of `embed_texts`. The texts are cut into the
requests the local path would make (`plan_batches`: inputs and tokens within the limits); each task embeds
one with `embed_texts` (the splitting of long texts, the retries with backoff and `Retry-After`), and at most
`concurrency` tasks run at once: `--embed-concurrency` bounds the requests in flight across the whole
cluster, as it bounds them on one machine, since the endpoint's rate limit is one for all. The vectors come
back in order into one flat array. The first request that fails for good stops the run with its own
`EmbeddingError`, before the table's commit. The API key goes to the tasks in their arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from lancelot_indexer.documents.collect import Engine
from lancelot_indexer.embedding.embed import Embeddings, Limits, embed_texts, endpoint_host, joined, plan_batches


def embed_in_tasks(
    engine: Engine,
    texts: Sequence[str],
    *,
    concurrency: int = 4,
    progress: Callable[[int], None] | None = None,
    **given: Any,
) -> Embeddings:
    """`embed_texts(texts, **given)`, a slice a task, at most `concurrency` requests in flight in all."""
    if not texts:
        return embed_texts(texts, **given)
    batches = plan_batches(texts, given.get("limits") or Limits(), concurrency)
    slices = [list(texts[batch.start : batch.stop]) for batch in batches]
    parts = []
    for part, texts_of in zip(engine.map(partial(embed_slice, given), slices, concurrency), slices, strict=True):
        parts.append(part)
        if progress is not None:
            progress(len(texts_of))
    return joined(parts, given["model"], endpoint_host(given.get("base_url")))


def embed_slice(given: dict[str, Any], texts: list[str]) -> Embeddings:
    """A task: one request's texts (more requests only for a text split; the tasks in flight make the concurrency)."""
    return embed_texts(texts, concurrency=1, **given)
