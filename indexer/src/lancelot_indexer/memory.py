"""Hand freed memory back to the system between the stages of a large write.

glibc keeps what Python and Lance free in its arenas for later use: after a streamed write of the
PostgreSQL manual copied 32 times, a process held 630 MB of which `malloc_trim` gave back 360 MB, and
each index build that followed stacked its own peak on top of the kept memory. Called after each batch
and after each index build; elsewhere (macOS, musl) there is no `malloc_trim` and this does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The process's own symbols: the C library it runs on (glibc has malloc_trim; musl does not).
        function: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return function


def trim() -> None:
    """Give the memory freed so far back to the system, where the C library can."""
    function = _malloc_trim()
    if function is not None:
        function(0)
