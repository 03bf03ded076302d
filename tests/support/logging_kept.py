"""Logging as it was before a block: structlog's configuration and the root logger's handlers and level."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


@contextlib.contextmanager
def logging_kept() -> Iterator[None]:
    """Put logging back as it was when the block ends: a command run in this process sets structlog's level
    for the process, and a later test's info lines vanished."""
    import structlog

    config, root = structlog.get_config(), logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        structlog.configure(**config)
        root.handlers[:] = handlers
        root.setLevel(level)
