"""A progress bar on stderr, shown only when stderr is a terminal (never in CI logs or pipes)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click

from lancelot_indexer.pipeline import ProgressCallback


@contextlib.contextmanager
def bar(enabled: bool) -> Iterator[ProgressCallback | None]:
    """A callback for `pipeline.build` that draws a bar per stage, or None when there is no terminal."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    bars: dict[str, Any] = {}
    finished: set[str] = set()

    def update(stage: str, done: int, total: int) -> None:
        if stage in finished:
            return
        current = bars.get(stage)
        if current is None:
            current = click.progressbar(length=total, label=stage, file=sys.stderr).__enter__()
            bars[stage] = current
        current.update(done - current.pos)
        if done >= total:
            # Ended at once, so that the next stage's bar and log lines start on a line of their own.
            bars.pop(stage).__exit__(None, None, None)
            finished.add(stage)

    try:
        yield update
    finally:
        for current in bars.values():
            current.__exit__(None, None, None)
