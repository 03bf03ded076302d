"""Read files in worker processes, each file under a time limit and each worker under a memory limit.

    with Workers(read, count=4, limit=60.0, memory=1024) as workers:
        for outcome in workers.map(items): ...   # read(item), or Lost(reason), in the items' order

A parser can spin on a hostile file inside its C code (Lexbor's tree building is quadratic in the
nesting depth), where no Python-level timeout reaches it; only its process can be stopped. So the
parent hands each worker its files one by one (a few ahead, so it never waits), knows which file each
is reading and since when, and kills a worker whose file took longer than `limit`: that file is lost
with a reason, a fresh worker takes its place and the others never stop. A worker that dies (a crash
in a parser, the kernel's out-of-memory killer) costs its file only, in the same way. A worker may grow
by `memory` megabytes at most (`memory.limit_data`): a file that needs more fails to allocate it, and
`read` says so, or the worker dies of it (PDFium aborts) and is replaced.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Generic, TypeVar

from lancelot_indexer import memory as memory_limit

Item = TypeVar("Item")
Result = TypeVar("Result")

_AHEAD = 8  # files sent to a worker ahead, so that it never waits for the parent
_CTRL_C_IGNORED = "lancelot_indexer.documents.ctrl_c_ignored"  # a forkserver's first preload (its docstring says why)


@dataclass(frozen=True)
class Lost:
    """A file whose reader was stopped or died: why, for the list of skipped files."""

    reason: str


_STOPS = {signal.SIGINT, signal.SIGTERM}
_PR_SET_PDEATHSIG = 1


def _leave_stops_to_the_parent(parent: int | None) -> None:
    # Ctrl-C reaches the whole process group. A worker that died of it would print a traceback; the
    # parent stops the workers instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent ends its workers itself: they die quietly, whatever handler it installed, and SIGTERM
    # comes through (the parent blocks it while it forks us; the mask is inherited).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    # A parent that dies without ending us must not leave us waiting for work forever, holding its lock
    # file open (the next run would find the database locked). Elsewhere the pipe's end does that.
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent is not None and os.getppid() != parent:
        os._exit(0)  # the parent died before prctl took effect


def over_memory(megabytes: int) -> str:
    """Why a file that needed more memory than a worker may take was skipped."""
    return f"reading it needed more than {megabytes} MB of memory, the limit per file (--file-memory)"


def over_time(seconds: float) -> str:
    """Why a file whose reading took longer than a reader may take was skipped."""
    return f"reading it took longer than {seconds:g} s, the limit per file (--file-timeout)"


def _serve(
    connection: Connection,
    read: Callable[[object], object],
    parent: int | None,
    megabytes: int | None,
    grown: memory_limit.Shared | None,
    began: memory_limit.Shared | None = None,
) -> None:
    """A worker: read each (index, item) that comes, send back (index, result), until the pipe closes."""
    _leave_stops_to_the_parent(parent)
    if megabytes is not None:
        memory_limit.limit_data(megabytes, grown, began)
    try:
        connection.send(None)  # started: the time of the first file counts from here, not from the fork
    except OSError:
        return  # the parent stopped while we started: nothing to say
    while True:
        try:
            index, item = connection.recv()
        except (EOFError, MemoryError):  # the parent closed the pipe; or no memory is left even for that
            return
        memory_limit.reading()
        try:
            result = read(item)
        except Exception as exc:  # a bug in a reader: raised in the parent, as it would be without workers
            result = _Raised(exc)
        try:
            connection.send((index, result))
        except MemoryError:  # the result is pickled whole before it is sent
            if megabytes is None:
                raise
            connection.send((index, Lost(over_memory(megabytes))))
        del result  # not held while the next item is read


@dataclass(frozen=True)
class _Raised:
    error: Exception


def start_method() -> str:
    """`fork` where that is safe: on Linux, before any thread of ours starts and before Lance's runtime
    threads exist (a child must not inherit a lock another thread holds); else a forkserver, which
    starts clean; else `spawn`."""
    if sys.platform == "linux" and threading.active_count() == 1 and "lance" not in sys.modules:
        return "fork"
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


@contextlib.contextmanager
def _stops_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends. Blocked in this thread; and since another thread (Lance's,
    watchdog's) may take a signal this one blocks, whose Python handler then runs here all the same, the
    handlers only note it meanwhile (the main thread's: no other can set handlers)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS) if hasattr(signal, "pthread_sigmask") else None
    caught: list[signal.Signals] = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {
            stop: signal.signal(stop, lambda signum, frame: caught.append(signal.Signals(signum))) for stop in _STOPS
        }
    try:
        yield
    finally:
        for stop, handler in previous.items():
            signal.signal(stop, handler)
        if blocked is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a stop that came meanwhile is raised here
        for signum in caught[:1]:
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)


@dataclass
class _Worker:
    process: BaseProcess
    connection: Connection
    sent: deque[int] = field(default_factory=deque)  # indexes sent, in order; the first is being read
    since: float | None = None  # when it started on the first of them; None until it has started
    grown: memory_limit.Shared | None = None  # how far its memory grew (its peak), as it last said
    began: memory_limit.Shared | None = None  # forked: the resident size its growth counts from, as it said


class Workers(Generic[Item, Result]):
    """`count` processes that `read` items, each item within `limit` seconds and each process within `memory`
    megabytes more than it started with (None: no limit).

    `preload`: modules `read` needs, imported once by a forkserver rather than by every worker.
    """

    def __init__(
        self,
        read: Callable[[Item], Result],
        count: int,
        limit: float | None,
        preload: Sequence[str] = (),
        memory: int | None = None,
    ) -> None:
        self._read = read
        self._limit = limit
        self._memory = memory
        self._preload = list(preload)
        self._workers: list[_Worker] = []
        try:
            for slot in range(count):
                self._start(slot)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Workers[Item, Result]:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End every worker at once (they hold nothing worth waiting for)."""
        for worker in self._workers:
            _end(worker)
        self._workers.clear()

    def _start(self, slot: int) -> None:
        """Start a worker in `slot` of the list (a new one at its end)."""
        method = start_method()
        context = multiprocessing.get_context(method)
        if method == "forkserver":
            # Only before the server starts (once per process); later calls change nothing.
            context.set_forkserver_preload([_CTRL_C_IGNORED, *self._preload])
        ours, theirs = context.Pipe()
        grown = context.RawValue("q", 0) if self._memory is not None else None
        # Only a forked worker is our child, whose peak the kernel tells us when we reap it.
        began = context.RawValue("q", -1) if method == "fork" and self._memory is not None else None
        # Forked workers know their parent; a forkserver's are its children, and die with it.
        parent = os.getpid() if method == "fork" else None
        # typeshed gives a context chosen by name no Process; every start method's context has one.
        process: BaseProcess = context.Process(  # type: ignore[attr-defined]
            target=_serve, args=(theirs, self._read, parent, self._memory, grown, began), daemon=True
        )
        # A stop cannot come between the fork and our knowing the worker (it would be left behind).
        with _stops_held():
            try:
                process.start()
                worker = _Worker(process, ours, grown=grown, began=began)
                if slot == len(self._workers):
                    self._workers.append(worker)
                else:
                    self._workers[slot] = worker
            finally:
                theirs.close()

    def map(self, items: Sequence[Item]) -> Iterator[Result | Lost]:
        """`read(item)` for every item, in order; `Lost` for an item whose worker was stopped or died."""
        waiting = deque(range(len(items)))
        done: dict[int, Result | Lost] = {}
        self._send(items, waiting)
        for index in range(len(items)):
            while index not in done:
                self._step(items, waiting, done)
            yield done.pop(index)

    def _send(self, items: Sequence[Item], waiting: deque[int]) -> None:
        """Give every worker items up to `_AHEAD` (one that died stops taking them; `_step` replaces it)."""
        for worker in self._workers:
            if waiting and not worker.sent and worker.since is not None:
                worker.since = time.monotonic()  # it was idle: its next file starts now
            while waiting and len(worker.sent) < _AHEAD:
                try:
                    worker.connection.send((waiting[0], items[waiting[0]]))
                except OSError:
                    break
                worker.sent.append(waiting.popleft())

    def _step(self, items: Sequence[Item], waiting: deque[int], done: dict[int, Result | Lost]) -> None:
        """Wait for a result, a dead worker or a file over its time; a worker that is gone is replaced."""
        ready = wait([worker.connection for worker in self._workers], self._timeout())
        now = time.monotonic()
        for number, worker in enumerate(self._workers):
            if worker.connection in ready:
                try:
                    message = worker.connection.recv()
                except (EOFError, OSError):
                    if worker.since is None:
                        raise RuntimeError(f"a reader process could not start ({_how(worker)})") from None
                    lost = Lost(self._died(worker))
                else:
                    worker.since = now
                    if message is not None:  # None: the worker has started
                        index, result = message
                        if isinstance(result, _Raised):
                            raise result.error
                        worker.sent.popleft()
                        done[index] = result
                    continue
            elif self._overdue(worker, now) and self._limit is not None:
                lost = Lost(over_time(self._limit))
            else:
                continue
            if worker.sent:  # the file it was reading; not one it never took (it died idle)
                done[worker.sent.popleft()] = lost
            waiting.extendleft(reversed(worker.sent))  # the files it had not begun go to the others
            _end(worker)
            self._start(number)
        self._send(items, waiting)

    def _died(self, worker: _Worker) -> str:
        peak = _kernels_peak(worker)  # reaps it, so first
        how = _how(worker)
        # A C library that cannot allocate may abort (PDFium does): its peak says whether that is why.
        if (
            worker.grown is not None
            and self._memory is not None
            and memory_limit.near(max(worker.grown.value, peak), self._memory)
        ):
            return over_memory(self._memory)
        return f"its reader process died ({how})"

    def _timeout(self) -> float | None:
        started = [worker.since for worker in self._workers if worker.sent and worker.since is not None]
        if self._limit is None or not started:
            return None
        return max(0.0, min(started) + self._limit - time.monotonic())

    def _overdue(self, worker: _Worker, now: float) -> bool:
        since, limit = worker.since, self._limit
        return bool(worker.sent) and since is not None and limit is not None and now - since > limit


def _end(worker: _Worker) -> None:
    with contextlib.suppress(OSError, ValueError):
        worker.process.kill()
        worker.process.join()
    worker.connection.close()


def _kernels_peak(worker: _Worker) -> int:
    """How far a dead forked worker's resident memory grew at its peak, as the kernel counted it (its rusage,
    reaped here); 0 for a forkserver's worker (not our child) or one not gone within a second. Its own count,
    `grown`, comes from a thread that a busy machine may not run before a C library aborts."""
    popen, pid = getattr(worker.process, "_popen", None), worker.process.pid
    if worker.began is None or worker.began.value < 0 or popen is None or pid is None or popen.returncode is not None:
        return 0
    deadline = time.monotonic() + 1.0
    while True:
        try:
            reaped, status, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if reaped:
            break
        if time.monotonic() > deadline:
            return 0
        time.sleep(0.005)
    popen.returncode = os.waitstatus_to_exitcode(status)  # multiprocessing's own wait would find it gone
    return max(0, usage.ru_maxrss * 1024 - worker.began.value)  # ru_maxrss: kilobytes on Linux


def _how(worker: _Worker) -> str:
    _end(worker)
    code = worker.process.exitcode
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return signal.Signals(-code).name
    return f"exit status {code}"
