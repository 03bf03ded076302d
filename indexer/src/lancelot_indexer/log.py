"""The indexer's log: structlog on stderr, imported only when there is something to show.

Importing structlog takes as long as reading a few hundred pages (more when rich is installed, which it
imports; docs/decisions.md). `lancelot-index --quiet` over a clean folder logs nothing, so it
should not pay for it: `configure` records the level, and the first message shown at that level sets
up logging with `lancelot_schema.logs.configure` and is logged through structlog like any other.
Without `configure` (the pipeline used as a library) messages go to structlog as the caller set it up.
Text is logged `printable`: a file name cannot forge a line or send the terminal an escape sequence.
"""

from __future__ import annotations

import logging
from typing import Any

from lancelot_indexer.printable import printable

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
        _structlog().get_logger("lancelot_indexer").warning(printable(event), **_printable(fields))


def info(event: str, **fields: Any) -> None:
    if _threshold <= logging.INFO:
        _structlog().get_logger("lancelot_indexer").info(printable(event), **_printable(fields))


def _structlog() -> Any:
    global _pending
    import structlog

    if _pending is not None:
        from lancelot_schema import logs

        logs.configure(_pending)
        _pending = None
    return structlog


def _printable(fields: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _Escaped(value) if isinstance(value, str) and not value.isprintable() else value
        for key, value in fields.items()
    }


class _Escaped(str):
    """A text made `printable` whose repr is the original's. structlog shows a value with a space in it
    by its repr, which escapes the same characters: escaped once, not a second time."""

    raw: str

    def __new__(cls, raw: str) -> _Escaped:
        escaped = super().__new__(cls, printable(raw))
        escaped.raw = raw
        return escaped

    def __repr__(self) -> str:
        return repr(self.raw)
