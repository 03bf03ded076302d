"""Reading documents in worker processes gives the same table, skips and encodings as reading them here;
a file over the time limit or the memory limit, or whose worker dies, is skipped and the others are read."""

import json
import operator
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path

import lancedb
import pytest
from tests.indexer.conftest import deep_html

from lancelot_indexer.documents.collect import POOL_MIN_FILES, collect
from lancelot_indexer.documents.walk import Skipped
from lancelot_indexer.documents.workers import Lost, Workers, over_memory
from lancelot_indexer.pipeline import Options, build

# Timing budgets: one worker runs these modules' tests one after another, however many workers run.
pytestmark = pytest.mark.xdist_group("timing")

BIN = Path(sys.executable).parent


def many_docs(root: Path) -> Path:
    """More files than POOL_MIN_FILES, of every kind, with a few that are skipped or read as Windows-1252."""
    root.mkdir()
    for n in range(POOL_MIN_FILES + 8):
        match n % 4:
            case 0:
                (root / f"p{n:03}.html").write_text(
                    f"<title>Page {n}</title><h2>Part</h2><p>para {n}</p><pre>code {n}\n  indented</pre>",
                    encoding="utf-8",
                )
            case 1:
                (root / f"m{n:03}.md").write_text(f"# Note {n}\n\nText {n}.\n\n## Sub\n\nMore.\n", encoding="utf-8")
            case 2:
                (root / f"t{n:03}.txt").write_text(f"Plain {n}.\n\n" + "word " * 400, encoding="utf-8")
            case _:
                (root / f"s{n:03}.txt").write_bytes(b"caf\xe9 %d" % n if n % 8 == 3 else b"\x00binary")
    return root


def rows(db: Path) -> list[dict]:
    return sorted(lancedb.connect(db).open_table("documents").to_arrow().to_pylist(), key=lambda row: row["id"])


def test_the_command_reads_a_large_folder_in_workers_and_writes_what_one_process_writes(tmp_path):
    docs = many_docs(tmp_path / "docs")
    out = subprocess.run(
        [BIN / "lancelot-index", docs, tmp_path / "pooled"], capture_output=True, text=True, timeout=120, check=True
    )
    alone = build(docs, tmp_path / "alone", Options(workers=1))
    assert rows(tmp_path / "pooled") == rows(tmp_path / "alone")
    skipped = [line.strip() for line in out.stdout.splitlines() if line.startswith("  ")]
    assert skipped == [f"{item.relative}: {item.reason}" for item in alone.skipped]
    assert len(skipped) == (POOL_MIN_FILES + 8) // 8
    assert f"Read as Windows-1252 (not valid UTF-8): {', '.join(alone.windows_1252)}" in out.stdout


# In a fresh process, as the command does: forking this one (Lance already loaded) is not what users run.
IN_WORKERS = """
import json, sys
from dataclasses import asdict
from pathlib import Path
from lancelot_indexer.documents.collect import collect
seen = []
collected = collect(Path(sys.argv[1]), 300, lambda *args: seen.append(args), workers=2)
print(json.dumps({"collected": asdict(collected), "progress": seen}))
"""


def test_two_workers_collect_the_same_rows_in_the_same_order_as_one_process(tmp_path):
    docs = many_docs(tmp_path / "docs")
    out = subprocess.run(
        [sys.executable, "-c", IN_WORKERS, docs], capture_output=True, text=True, timeout=120, check=True
    )
    pooled = json.loads(out.stdout)
    seen = []
    alone = collect(docs, 300, lambda *args: seen.append(list(args)), workers=1)
    assert pooled["collected"] == json.loads(json.dumps(asdict(alone)))
    assert pooled["progress"] == seen == [["read", n, len(seen)] for n in range(1, len(seen) + 1)]


def test_workers_started_from_a_process_that_loaded_lance_give_the_same_rows(tmp_path):
    # This process has Lance loaded (lancedb above): workers come from a forkserver, and Lance's
    # "not fork-safe" warning, an error under this suite's filterwarnings, is never raised.
    docs = many_docs(tmp_path / "docs")
    pooled = build(docs, tmp_path / "pooled", Options(workers=2))
    alone = build(docs, tmp_path / "alone", Options(workers=1))
    assert rows(tmp_path / "pooled") == rows(tmp_path / "alone")
    assert (pooled.documents, pooled.skipped, pooled.windows_1252) == (
        alone.documents,
        alone.skipped,
        alone.windows_1252,
    )


# Workers are given any function: each item here is a call (`operator.call` makes it), so that one can
# sleep past the limit, one can end its process, the others answer at once.
QUICK = [partial(pow, 2, n) for n in range(10)]
TIMEOUT = "reading it took longer than 1 s, the limit per file (--file-timeout)"


def test_a_worker_over_the_time_limit_is_stopped_its_item_lost_and_the_others_read_in_order():
    items = [*QUICK[:3], partial(time.sleep, 600), *QUICK[3:6], partial(time.sleep, 600), *QUICK[6:]]
    with Workers(operator.call, 2, limit=1.0) as workers:
        results = list(workers.map(items))
    assert results == [1, 2, 4, Lost(TIMEOUT), 8, 16, 32, Lost(TIMEOUT), 64, 128, 256, 512]


def test_a_worker_that_dies_costs_its_item_only():
    items = [*QUICK[:2], partial(os._exit, 3), QUICK[2], partial(signal.raise_signal, signal.SIGKILL), *QUICK[3:]]
    with Workers(operator.call, 2, limit=60.0) as workers:
        results = list(workers.map(items))
    assert results == [
        1,
        2,
        Lost("its reader process died (exit status 3)"),
        4,
        Lost("its reader process died (SIGKILL)"),
        *[2**n for n in range(3, 10)],
    ]


# Take memory a megabyte at a time until the limit refuses more, then abort, as PDFium does. Run by `exec`
# (its own globals): a function of this module would import it, and lancedb with it, in the worker.
FILL_THEN_ABORT = partial(
    exec,
    "import os, time\nheld = []\ntry:\n    while True:\n        held.append(b'x' * (1 << 20))\n"
    "        time.sleep(0.002)\nexcept MemoryError:\n    os.abort()\n",
    {},
)


# A fresh interpreter, with one thread, forks its workers (this one runs other threads: a forkserver's). Its
# reader takes 56 of its 64 MB at once and aborts without letting the worker's other thread run in between, as
# a busy machine may not: the worker's own count of its peak says nothing, the kernel's does.
UNSEEN_ABORT = """
import operator
from functools import partial
from lancelot_indexer.documents.workers import Workers, start_method
take = partial(exec, "import os, sys\\nsys.setswitchinterval(1e6)\\nheld = b'x' * (56 << 20)\\nos.abort()\\n", {})
with Workers(operator.call, 1, limit=60.0, memory=64) as workers:
    print(start_method(), [str(result) for result in workers.map([partial(int, "1"), take, partial(int, "2")])])
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the memory limit is Linux's (RLIMIT_DATA)")
def test_a_forked_worker_that_aborts_near_its_limit_before_it_could_say_so_is_over_it():
    done = subprocess.run([sys.executable, "-c", UNSEEN_ABORT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    over = str(Lost(over_memory(64)))
    assert done.stdout.strip() == f"fork {['1', over, '2']}"


@pytest.mark.skipif(sys.platform != "linux", reason="the memory limit is Linux's (RLIMIT_DATA)")
def test_a_worker_over_its_memory_limit_costs_its_item_with_that_reason_and_a_crash_below_it_is_a_crash():
    over = Lost(over_memory(64))
    items = [
        QUICK[0],
        FILL_THEN_ABORT,  # died at the limit
        QUICK[1],
        os.abort,  # died well below it
        partial(bytes, 40 << 20),  # read within the limit, but not within it once pickled to be sent
        partial(eval, "len(b'x' * (32 << 20))", {}),  # fits, in the worker that got over the one before
        QUICK[2],
    ]
    with Workers(operator.call, 1, limit=60.0, memory=64) as workers:
        results = list(workers.map(items))
    assert results == [1, over, 2, Lost("its reader process died (SIGABRT)"), over, 32 << 20, 4]


def test_an_error_in_the_reader_is_raised_here_as_without_workers():
    with Workers(operator.call, 1, limit=60.0) as workers, pytest.raises(ValueError, match="invalid literal"):
        list(workers.map([QUICK[0], partial(int, "x"), QUICK[1]]))


def test_a_deep_page_over_the_limit_is_skipped_and_every_other_document_is_read_as_without_it(tmp_path):
    docs = many_docs(tmp_path / "docs")
    alone = collect(docs, 300, workers=1, file_timeout=None, file_memory=None)
    deep_html(docs / "deep.html")
    pooled = collect(docs, 300, workers=2, file_timeout=0.5)
    limit = "reading it took longer than 0.5 s, the limit per file (--file-timeout)"
    assert pooled.skipped == [Skipped("deep.html", limit), *alone.skipped]  # in walk order, "deep" first
    assert (pooled.columns, pooled.documents, pooled.windows_1252) == (
        alone.columns,
        alone.documents,
        alone.windows_1252,
    )


def test_a_worker_left_idle_meanwhile_gets_the_full_limit_for_its_next_item():
    # Each worker is sent 8 items. Worker 0 reads its own at once and falls idle; worker 1 sleeps past the
    # limit on its third, two seconds later, and the five it had not begun go to worker 0 (the first to
    # be given items), whose clock starts then, not when it fell idle.
    slow = partial(time.sleep, 0.9)
    items = [*QUICK[:8], slow, slow, partial(time.sleep, 600), *[partial(time.sleep, 0.2)] * 5]
    with Workers(operator.call, 2, limit=1.0) as workers:
        results = list(workers.map(items))
    assert results == [*[2**n for n in range(8)], None, None, Lost(TIMEOUT), *[None] * 5]


# A fresh interpreter that loaded Lance: its readers come from a forkserver, which then forks one more process
# running a check of the SIGINT handler it starts with, before any code of ours could set it.
FORKSERVER_CHILD = """
import multiprocessing, operator
from functools import partial
import lance
from lancelot_indexer.documents.workers import Workers, start_method
with Workers(operator.call, 1, limit=60.0) as workers:
    assert list(workers.map([partial(int, "1")])) == [1]
context = multiprocessing.get_context("forkserver")
check = "import signal, sys\\nsys.exit(0 if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else 3)\\n"
process = context.Process(target=partial(exec, check, {}))
process.start()
process.join()
print(start_method(), process.exitcode)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the forkserver's preloads are Linux's here")
def test_the_readers_forkserver_starts_every_process_with_ctrl_c_ignored():
    # Else a Ctrl-C sent to the group as a worker starts reaches multiprocessing's bootstrap before the worker
    # ignores it, and prints a traceback under the one-line stop (seen in `--watch`, where threads run).
    done = subprocess.run([sys.executable, "-c", FORKSERVER_CHILD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["forkserver", "0"]
