"""Batches from the reading thread to Lance's writer in a thread of its own, a few at a time.

    with Feed(schema, write) as feed:   # write(reader) runs in a thread; the reader yields what is put
        feed.put(table) ...
        result = feed.close()           # the end of the input: waits for `write` and returns its result

Lance pulls a reader from threads of its own, where Ctrl-C and SIGTERM never arrive; so the documents
are read in the main thread, as before, and at most `QUEUED` tables wait in between, so memory does not
grow with the folder. An error on either side stops the other: the writer's is raised by `put` or
`close`; an error or stop in the main thread ends the input with an error, so Lance never commits a
table that lacks the rest of it.
"""

from __future__ import annotations

import queue
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import pyarrow as pa

Result = TypeVar("Result")

QUEUED = 2  # tables read ahead of the writer
_END = object()
_STOP = object()
_POLL = 0.1  # seconds between looks at the other side while waiting


class StoppedInput(Exception):
    """The reading side stopped before the end of its input."""


class Feed(Generic[Result]):
    def __init__(self, schema: pa.Schema, write: Callable[[pa.RecordBatchReader], Result]) -> None:
        import pyarrow as pa

        self._queue: queue.Queue[object] = queue.Queue(maxsize=QUEUED)
        self._result: Result | None = None
        self._error: BaseException | None = None
        reader = pa.RecordBatchReader.from_batches(schema, self._batches())
        self._thread = threading.Thread(target=self._run, args=(write, reader), daemon=True)
        self._thread.start()

    def __enter__(self) -> Feed[Result]:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None and self._thread.is_alive():
            # Make room and say stop: the writer raises from its reader and commits nothing.
            while True:
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
            self._queue.put(_STOP)
            self._thread.join(timeout=60)

    def _batches(self) -> Iterator[pa.RecordBatch]:
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if item is _STOP:
                raise StoppedInput("the documents stopped coming")
            yield from item.to_batches()  # type: ignore[attr-defined]

    def _run(self, write: Callable[[pa.RecordBatchReader], Result], reader: pa.RecordBatchReader) -> None:
        try:
            self._result = write(reader)
        except BaseException as exc:  # raised again in the main thread
            self._error = exc

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def put(self, table: object) -> None:
        """Hand on `table` (a `pa.Table` of the feed's schema); waits while `QUEUED` are waiting already."""
        while True:
            self._raise()
            try:
                self._queue.put(table, timeout=_POLL)
                return
            except queue.Full:
                if not self._thread.is_alive():
                    self._raise()
                    raise RuntimeError("the table writer stopped taking rows") from None

    def close(self) -> Result:
        """End the input, wait for the writer, and return what it returned (or raise what it raised)."""
        self.put(_END)
        while self._thread.is_alive():
            self._thread.join(_POLL)  # short waits: a stop (Ctrl-C) is seen between them
        self._raise()
        return self._result  # type: ignore[return-value]
