"""Keep the C library from holding memory the indexer no longer uses, and bound a reader process's.

glibc keeps what Python and Lance free in its arenas for later use: after a large streamed write a
process held much more than it used, `malloc_trim` gave over half of it back, and each index build that
followed stacked its own peak on top of the kept memory. So `trim` is called after each batch and after
each index build. And glibc gives each thread that contends for memory an arena of its own (up to 8 per
core): Lance's many threads then leave memory free in one arena that another cannot use. One arena
(`limit_arenas`) lowered the peak of that run, and it was no slower (docs/decisions.md, "Incremental
rebuilds and bounded memory"). Elsewhere (macOS, musl) neither function exists and both do nothing.

A reader process (`documents/workers.py`) may grow by at most so many megabytes while it reads
(`limit_data`): a 1 MB PDF can inflate to gigabytes. Linux's RLIMIT_DATA counts every private writable
mapping (since Linux 4.7), which is what malloc hands out, and not the libraries' code: past it, an
allocation fails (Python raises MemoryError, a C library reports an error or aborts). `reading` and
`reached_limit` tell, after a reader failed, whether the file took it to the limit, whatever it raised
(lxml reports a failed allocation as a syntax error); the peak it publishes tells its parent the same
when it died. Elsewhere there is no limit.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Protocol

_M_ARENA_MAX = -8  # mallopt's parameter for the number of arenas (glibc's malloc.h)
ARENAS = 1
# A file whose reading failed with its peak memory this close to the limit failed for want of memory (the
# peak a dead reader published is up to `_PUBLISH_NEAR` seconds old).
_NEAR = 0.8
_PUBLISH, _PUBLISH_NEAR = 0.02, 0.001  # seconds between looks at the peak: below half the limit, past it
_MB = 1 << 20
_PROC = Path("/proc/self")


class Shared(Protocol):
    """An integer shared with another process (multiprocessing's RawValue)."""

    value: int


_limit: tuple[int, int] | None = None  # in a limited process: its resident memory when limited, the megabytes allowed


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


def _status(field: str) -> int | None:
    """A size from /proc/self/status (VmData, VmRSS, VmHWM), in bytes; None where there is none."""
    with contextlib.suppress(OSError):
        for line in _PROC.joinpath("status").read_text(encoding="ascii").splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return None


def limit_data(megabytes: int, grown: Shared | None = None, began: Shared | None = None) -> None:
    """From now on, this process's data may grow by at most `megabytes` (Linux; elsewhere nothing).

    `grown`, a shared integer, is kept up to date with how far its peak resident size grew since, by a
    thread: the parent reads it when the process died (a C library that cannot allocate may abort, PDFium
    does). `began` is told the resident size it grows from, for the kernel's count of its peak.
    """
    global _limit
    resident = _status("VmRSS") if sys.platform.startswith("linux") else None
    if resident is None:
        return
    if began is not None:
        began.value = resident
    if grown is not None:  # first: its stack is not the file's
        threading.Thread(target=_publish, args=(grown, resident, megabytes), daemon=True).start()
    import resource

    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    wanted = (_status("VmData") or 0) + megabytes * _MB
    resource.setrlimit(resource.RLIMIT_DATA, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    _limit = (resident, megabytes)


def _publish(grown: Shared, resident: int, megabytes: int) -> None:
    half = megabytes * _MB // 2
    while True:
        grown.value = max(0, (_status("VmHWM") or resident) - resident)
        time.sleep(_PUBLISH if grown.value < half else _PUBLISH_NEAR)  # closely once past half the limit


def limited() -> int | None:
    """The megabytes `limit_data` allowed this process, or None."""
    return _limit[1] if _limit is not None else None


def reading() -> None:
    """A file's reading starts: its peak memory is counted from here."""
    if _limit is not None:
        with contextlib.suppress(OSError):
            _PROC.joinpath("clear_refs").write_text("5", encoding="ascii")  # the peak resident size := the current one


def near(grown: int, megabytes: int) -> bool:
    """Whether a process that grew by `grown` bytes came close to a limit of `megabytes`."""
    return grown >= _NEAR * megabytes * _MB


def reached_limit() -> bool:
    """Whether this process's reading since `reading` came close to its limit."""
    peak = _status("VmHWM") if _limit is not None else None
    if _limit is None or peak is None:
        return False
    resident, megabytes = _limit
    return near(peak - resident, megabytes)
