"""Read documents in Ray tasks (`--ray`): on a cluster, or on a Ray started on this machine.

    with Cluster("auto", cpus=None, file_timeout=60.0) as cluster:
        Reader(chunk_size, files, engine=cluster)   # each file read by a task, its rows back here

A task reads a batch of files with the function a local worker process calls for each file
(`collect.read_document`): the same readers, chunker, locators and metadata, and a bad file skipped with
the same reason. The outcomes come back to this process (Ray's driver) in the files' order, where the
`Reader` tallies them and the one writer writes them, so the table is the one a local run writes. A file
that takes longer than `file_timeout` seconds is stopped in its task and skipped, as a local worker's is;
the time counts in the task, from the file's start, so a task that waits for a worker loses none of it. A
task that dies (its worker crashed or was killed for memory, its node left), or outlives its files' time and
a grace for waiting (a reader stuck in C code, which the task's alarm cannot stop), costs its files a second
try, each in a task of its own; a file that fails alone is skipped with why.

Ray is imported, and started or joined, when the first file is to be read: a run with nothing to read
never starts it. A Ray that this process had joined already (a test; a script under `ray job submit`
calling `pipeline.build`) is used as it is and left running.
"""

from __future__ import annotations

import logging
import math
import signal
import socket
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Any, TypeVar

from lancelot_indexer.documents.collect import Outcome
from lancelot_indexer.documents.walk import Found
from lancelot_indexer.documents.workers import over_time
from lancelot_indexer.errors import ClusterError
from lancelot_indexer.readers import formats

LOCAL = "local"  # --ray without an ADDRESS: a Ray of this machine's own, ended with the run
# Files a task reads at most: few enough that a lost task costs little, many enough that a task's overhead
# (milliseconds) stays small beside reading its files.
BATCH_FILES = 64
# Tasks queued for each CPU of the cluster: every worker has its next batch waiting, and the outcomes held
# in Ray's object store for the driver stay a few batches a CPU.
AHEAD = 4
_CONNECT = 10.0  # seconds a head's GCS port may take to take a connection
# Seconds a task may wait, beyond its files' time, for a worker to take it (queued behind others, or a worker
# starting on a loaded node) before the driver gives up on it.
WAIT_GRACE = 60.0


def address_problem(address: str) -> str | None:
    """Why `address` names no Ray cluster, or None."""
    if address in (LOCAL, "auto") or address.startswith("ray://"):
        return None
    host, colon, port = address.rpartition(":")
    if "://" not in address and colon and host and port.isdigit():
        return None  # a head node's GCS address, HOST:6379, from a machine of the cluster
    return f"{address!r} is no Ray address: give auto, ray://HEAD:10001 or HOST:PORT, or no ADDRESS for a Ray here."


def _reachable(address: str) -> None:
    """A head's HOST:PORT that takes no connection is said at once: Ray would wait for it without end."""
    host, colon, port = address.rpartition(":")
    if "://" in address or not colon or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=_CONNECT).close()
    except OSError as exc:
        raise ClusterError(
            f"Nothing answers at {address} ({exc.strerror or exc}): give the address of a running Ray head "
            "(its GCS port, 6379 by default), or ray://HEAD:10001, or auto on a node of the cluster."
        ) from None


def _not_installed(exc: Any) -> None:
    """A task that failed as its worker could not import the indexer says so, once, for the whole run."""
    if isinstance(exc.cause, ImportError):
        raise ClusterError(
            f"The Ray workers cannot run the indexer ({exc.cause}): install lancelot-indexer on the "
            "cluster's nodes, or give it in the job's runtime environment (docs/ray.md)."
        ) from None


class _OverTime(BaseException):
    """Raised in a task by its alarm: not an Exception, so that `read_document` does not take it for a reader's."""


def _over_time(signum: int, frame: object) -> None:
    raise _OverTime


def _read_files(read: Callable[[Found], Outcome], files: Sequence[Found], limit: float | None) -> list[Outcome]:
    """A task: each file's outcome, as a local worker process reads it, each within `limit` seconds."""
    if limit is None or threading.current_thread() is not threading.main_thread():
        return [read(item) for item in files]
    before = signal.signal(signal.SIGALRM, _over_time)
    outcomes: list[Outcome] = []
    try:
        for item in files:
            try:
                signal.setitimer(signal.ITIMER_REAL, limit)
                outcomes.append(read(item))
            except _OverTime:
                outcomes.append(over_time(limit))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, before)
    return outcomes


T = TypeVar("T")
R = TypeVar("R")


def _call(function: Callable[[T], R], item: T) -> R:
    """A task of `Cluster.map`."""
    return function(item)


@dataclass(frozen=True)
class _Task:
    files: Sequence[Found]
    ref: Any  # a ray.ObjectRef of the files' outcomes


class Cluster:
    """The Ray at `address` (`LOCAL`: one started here with `cpus` CPUs, None: all of them), reading files in
    tasks, each file within `file_timeout` seconds (None: no limit)."""

    def __init__(self, address: str, *, cpus: int | None = None, file_timeout: float | None = None) -> None:
        self._address = address
        self._cpus = cpus
        self._limit = file_timeout
        self._started = False
        self._ray: ModuleType | None = None
        self._task: Any = None
        self._call: Any = None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Shut down the Ray this run started (one it joined is left as it was)."""
        if self._ray is not None and self._started:
            self._ray.shutdown()
        self._ray, self._started = None, False

    def _connect(self) -> ModuleType:
        if self._ray is not None:
            return self._ray
        try:
            import ray
        except ImportError:
            raise ClusterError(f"--ray needs the optional 'ray' extra: {formats.extra_command('ray')}") from None
        if not ray.is_initialized():
            _reachable(self._address)
            try:
                with warnings.catch_warnings():
                    # Ray forks only to exec its own processes (GCS, raylet, workers), which never touch Lance.
                    warnings.filterwarnings("ignore", "lance is not fork-safe", UserWarning)
                    if self._address == LOCAL:
                        # "local": our own Ray, even where RAY_ADDRESS names a cluster (--ray auto joins that).
                        ray.init(
                            address=LOCAL,
                            num_cpus=self._cpus,
                            include_dashboard=False,
                            log_to_driver=False,
                            logging_level=logging.WARNING,
                        )
                    else:
                        ray.init(address=self._address, log_to_driver=False, logging_level=logging.WARNING)
            except (ConnectionError, ValueError) as exc:
                raise ClusterError(
                    f"Could not join the Ray cluster at {self._address} ({' '.join(str(exc).split())[:200]}): "
                    "check that it runs and that --ray names its head (ray://HEAD:10001, or auto on a node of it)."
                ) from None
            self._started = True
        self._ray = ray
        self._task = ray.remote(num_cpus=1, max_retries=0)(_read_files)
        # No CPU of the cluster's: these tasks wait on an endpoint, beside the reading tasks, not behind them.
        self._call = ray.remote(num_cpus=0, max_retries=2)(_call)
        return ray

    def outcomes(self, read: Callable[[Found], Outcome], found: Sequence[Found]) -> Iterator[Outcome]:
        """`read(item)` for every item, in order, each batch of files in a task; why, for a file whose task failed."""
        ray = self._connect()
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = max(1, min(BATCH_FILES, math.ceil(len(found) / (cpus * AHEAD))))
        waiting = deque(found[start : start + size] for start in range(0, len(found), size))
        pending: deque[_Task] = deque()
        try:
            while waiting or pending:
                while waiting and len(pending) < cpus * AHEAD:
                    pending.append(self._submit(read, waiting.popleft()))
                yield from self._finish(ray, read, pending.popleft())
        finally:
            for task in pending:  # stopped early: the cluster need not read on for nobody
                ray.cancel(task.ref, force=True)

    def map(self, function: Callable[[T], R], items: Sequence[T], in_flight: int) -> Iterator[R]:
        """`function(item)` for every item, each in a task of its own, at most `in_flight` at once, in order. A
        task whose worker died is run again (twice at most: `function` must be safe to repeat); what it raised
        is raised here as itself, not wrapped in Ray's error."""
        ray = self._connect()
        waiting = deque(items)
        pending: deque[Any] = deque()
        try:
            while waiting or pending:
                while waiting and len(pending) < in_flight:
                    pending.append(self._call.remote(function, waiting.popleft()))
                try:
                    yield ray.get(pending.popleft())
                except ray.exceptions.RayTaskError as exc:
                    _not_installed(exc)
                    raise exc.cause from None
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def _submit(self, read: Callable[[Found], Outcome], files: Sequence[Found]) -> _Task:
        return _Task(files, self._task.remote(read, files, self._limit))

    def _finish(self, ray: ModuleType, read: Callable[[Found], Outcome], task: _Task) -> list[Outcome]:
        """The outcomes of `task`'s files; a task that failed is tried again one task a file."""
        errors = ray.exceptions
        timeout = None if self._limit is None else self._limit * len(task.files) + WAIT_GRACE
        try:
            outcomes: list[Outcome] = ray.get(task.ref, timeout=timeout)
            return outcomes
        except errors.GetTimeoutError:
            ray.cancel(task.ref, force=True)
            reason = over_time(self._limit or 0.0)  # the reason when the task read one file
        except errors.RayTaskError as exc:
            _not_installed(exc)
            raise  # a bug: read_document turns every reader's error into a reason
        except (
            errors.WorkerCrashedError,
            errors.OutOfMemoryError,
            errors.NodeDiedError,
            errors.ObjectLostError,
        ) as exc:
            reason = f"its Ray task died ({type(exc).__name__})"
        if len(task.files) == 1:
            return [reason]
        alone = [self._submit(read, [item]) for item in task.files]
        return [outcome for single in alone for outcome in self._finish(ray, read, single)]
