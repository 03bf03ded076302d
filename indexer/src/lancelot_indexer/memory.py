"""Keep the C library from holding memory the indexer no longer uses.

glibc keeps what Python and Lance free in its arenas for later use: after a large streamed write a
process held much more than it used, `malloc_trim` gave over half of it back, and each index build that
followed stacked its own peak on top of the kept memory. So `trim` is called after each batch and after
each index build. And glibc gives each thread that contends for memory an arena of its own (up to 8 per
core): Lance's many threads then leave memory free in one arena that another cannot use. One arena
(`limit_arenas`) lowered the peak of that run, and it was no slower (docs/decisions.md, "Incremental
rebuilds and bounded memory"). Elsewhere (macOS, musl) neither function exists and both do nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache

_M_ARENA_MAX = -8  # mallopt's parameter for the number of arenas (glibc's malloc.h)
ARENAS = 1


@cache
def _glibc(name: str) -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The process's own symbols: the C library it runs on (glibc has these; musl does not).
        function: Callable[..., int] = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    return function


def limit_arenas() -> None:
    """At most `ARENAS` malloc arenas from now on: call it before threads start."""
    function = _glibc("mallopt")
    if function is not None:
        function(_M_ARENA_MAX, ARENAS)


def trim() -> None:
    """Give the memory freed so far back to the system, where the C library can."""
    function = _glibc("malloc_trim")
    if function is not None:
        function(0)
