"""Batches handed to a writer in its own thread: results, errors both ways, and nothing committed on a stop."""

import threading
import time

import pyarrow as pa
import pytest

from lancelot_indexer.writing.stream import QUEUED, Feed

SCHEMA = pa.schema([("n", pa.int64())])


def table(*values):
    return pa.table({"n": list(values)}, schema=SCHEMA)


def test_the_writer_reads_every_table_in_order_and_its_result_is_returned():
    with Feed(SCHEMA, lambda reader: reader.read_all()["n"].to_pylist()) as feed:
        for n in range(10):
            feed.put(table(n, n + 100))
        assert feed.close() == [v for n in range(10) for v in (n, n + 100)]


def test_the_writer_waits_for_tables_and_the_reader_waits_for_room():
    reading = threading.Event()

    def slow(reader):
        assert reading.wait(30)
        return sum(batch.num_rows for batch in reader)

    with Feed(SCHEMA, slow) as feed:
        for n in range(QUEUED):
            feed.put(table(n))
        # The queue is full: the next put waits until the writer reads, which it begins 0.2 s from now.
        threading.Timer(0.2, reading.set).start()
        started = time.monotonic()
        feed.put(table(QUEUED))
        assert time.monotonic() - started >= 0.19
        for n in range(QUEUED + 1, QUEUED + 5):
            feed.put(table(n))
        assert feed.close() == QUEUED + 5


def test_an_error_in_the_writer_is_raised_in_the_reading_thread():
    def failing(reader):
        next(iter(reader))
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), Feed(SCHEMA, failing) as feed:
        for n in range(100):
            feed.put(table(n))
        feed.close()


def test_an_error_while_reading_stops_the_writer_before_it_commits():
    seen: list[BaseException] = []

    def writer(reader):
        try:
            reader.read_all()
        except BaseException as exc:
            seen.append(exc)
            raise
        return "committed"

    with pytest.raises(KeyboardInterrupt), Feed(SCHEMA, writer) as feed:
        feed.put(table(1))
        raise KeyboardInterrupt
    assert len(seen) == 1 and "the documents stopped coming" in str(seen[0])  # StoppedInput, through Arrow
