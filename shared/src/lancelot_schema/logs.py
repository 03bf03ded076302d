"""Structured logging for every Lancelot entry point: always to stderr, never to stdout.

stdout belongs to the MCP protocol (server) or to the person at the terminal (indexer, init).
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure(level: str = "INFO", *, json: bool = False) -> None:
    """Send structlog and the standard `logging` module to stderr at `level`."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(numeric, logging.WARNING))
    logging.captureWarnings(True)
