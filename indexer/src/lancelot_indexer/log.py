"""The indexer's log: structlog on stderr, imported only when there is something to show.

Importing structlog takes about a fifth of a second (more when rich is installed, which it imports),
as long as reading a few hundred pages. `lancelot-index --quiet` over a clean folder logs nothing, so it
should not pay for it: `configure` records the level, and the first message shown at that level sets
up logging with `lancelot_schema.logs.configure` and is logged through structlog like any other.
Without `configure` (the pipeline used as a library) messages go to structlog as the caller set it up.
"""

from __future__ import annotations

import logging
from typing import Any

_pending: str | None = None  # the level to configure before the first message
_threshold = logging.NOTSET


def configure(level: str, *, now: bool = False) -> None:
    """Log at `level` and above (to stderr); `now` sets structlog up at once (e.g. other modules use it)."""
    global _pending, _threshold
    numeric = logging.getLevelName(level.upper())
    _threshold = numeric if isinstance(numeric, int) else logging.INFO
    _pending = level
    if now:
        _structlog()


def warning(event: str, **fields: Any) -> None:
    if _threshold <= logging.WARNING:
        _structlog().get_logger("lancelot_indexer").warning(event, **fields)


def info(event: str, **fields: Any) -> None:
    if _threshold <= logging.INFO:
        _structlog().get_logger("lancelot_indexer").info(event, **fields)


def _structlog() -> Any:
    global _pending
    import structlog

    if _pending is not None:
        from lancelot_schema import logs

        logs.configure(_pending)
        _pending = None
    return structlog
