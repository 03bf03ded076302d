"""The full-text indexes of a table on object storage, loaded whole into Lance's session ahead of the queries.

    Ahead(dataset, bound_bytes, loaded)      starts loading in a thread of its own; .wait(timeout) → ended
    preload(dataset, bound_bytes, loaded)    the loading itself → the indexes loaded, named

Each index is read in parallel with the others, and the whole in the background: a table's first search scans
its held columns (`held.py`) meanwhile, each its own chain of round trips, and its full-text query waits for the
loading to end (`LanceTable.loaded_ahead`), so that no part of an index is read by both (docs/decisions.md,
"Object storage: the first query").
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog

# Of the bound, what the full-text indexes loaded ahead may take: the index cache's other eighth is for what
# queries read.
PRELOAD_SHARE = 3 / 8
# What a full-text index takes in the cache, loaded whole, per byte of its files: 2.7 measured on the PostgreSQL
# manual's three (2.6 MiB of files, 7.0 MiB in the cache).
CACHED_PER_STORED_BYTE = 3

log = structlog.get_logger("lancelot.store")


def preload(dataset: Any, bound_bytes: int, loaded: set[str]) -> list[str]:
    """Load the full-text indexes of `dataset` whole into its session's cache, all at once (each is read in
    parallel with the others), skipping those whose files were loaded before (`loaded`, index segment ids, grows)
    and those that would take the cache past `PRELOAD_SHARE` of its bound, so that what queries read keeps room: an
    index too large is never read whole only to be refused. The indexes loaded, named."""
    room = int(bound_bytes * PRELOAD_SHARE) - dataset.session().size_bytes()
    wanted = {}
    for described in dataset.describe_indices():
        segments = {str(segment.uuid) for segment in described.segments}
        need = CACHED_PER_STORED_BYTE * int(described.total_size_bytes or 0)
        if described.index_type == "Inverted" and not segments <= loaded and need <= room:
            wanted[described.name] = segments
            room -= need
    if wanted:
        with ThreadPoolExecutor(len(wanted), thread_name_prefix="lancelot-preload") as pool:
            done = list(pool.map(lambda name: _prewarmed(dataset, name), wanted))
        wanted = {name: segments for (name, segments), ok in zip(wanted.items(), done, strict=True) if ok}
    for segments in wanted.values():
        loaded |= segments
    return list(wanted)


def _prewarmed(dataset: Any, name: str) -> bool:
    """Whether index `name` is now in the cache whole. An index that does not fit (Lance then refuses), or a bucket
    that failed, is left to be read as queries need it: the query that meets the failure reports it."""
    try:
        dataset.prewarm_index(name)
    except Exception as exc:
        log.info("index not loaded ahead", index=name, reason=str(exc)[:300])
        return False
    return True


class Ahead:
    """`preload` in a thread of its own, started now."""

    def __init__(self, dataset: Any, bound_bytes: int, loaded: set[str]) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(dataset, bound_bytes, loaded), name="lancelot-preload", daemon=True
        )
        self._thread.start()

    @staticmethod
    def _run(dataset: Any, bound_bytes: int, loaded: set[str]) -> None:
        try:
            preload(dataset, bound_bytes, loaded)
        except Exception as exc:  # a bucket that failed: the query that needs the index meets it and reports it
            log.info("indexes not loaded ahead", reason=str(exc)[:300])

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the loading has ended, waiting up to `timeout` for it (None: as long as it takes)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
