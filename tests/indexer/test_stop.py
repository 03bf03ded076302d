"""Ctrl-C and SIGTERM: one line saying what became of the table, no traceback, workers gone, table intact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lancedb
import pytest
from tests.support.indexing import run_index

from .conftest import running, write_big_text

# Timing budgets: one worker runs these modules' tests one after another, however many workers run.
pytestmark = pytest.mark.xdist_group("timing")

BIN = Path(sys.executable).parent


def many_docs(root: Path, files: int = 200) -> Path:
    root.mkdir()
    for number in range(files):
        write_big_text(root / f"page{number:03}.md", size=80 * 1024)
    return root


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def all_ended(workers: set[int], within: float = 10.0) -> bool:
    """Whether every worker is gone within `within` s (they die with the indexer, a moment after it)."""
    deadline = time.monotonic() + within
    while any(running(pid) for pid in workers):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def start_and_stop(command: list, how: str, settle: float = 0.2) -> tuple[subprocess.CompletedProcess, set[int]]:
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not (workers := children(process.pid)):  # reading has begun once the workers exist
        assert process.poll() is None and time.monotonic() < deadline, "no worker ever started"
        time.sleep(0.002)
    time.sleep(settle)
    if how == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)  # a terminal sends it to the whole group
    elif how == "sigkill":
        process.kill()
    else:
        process.send_signal(signal.SIGTERM)  # CI stops the job's main process
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(command, process.returncode, out, err), workers


@pytest.mark.skipif(sys.platform != "linux", reason="worker processes and /proc are Linux's")
@pytest.mark.parametrize(("how", "status"), [("ctrl-c", 130), ("sigterm", 143)])
def test_a_stop_while_reading_says_the_table_is_untouched_and_leaves_no_worker(tmp_path, how, status):
    docs = many_docs(tmp_path / "docs")
    db = tmp_path / "db"
    (docs.parent / "first").mkdir()
    (docs.parent / "first" / "only.md").write_text("The previous table.\n", encoding="utf-8")
    run_index("-q", docs.parent / "first", db)  # the previous table, made in this process
    done, workers = start_and_stop([str(BIN / "lancelot-index"), str(docs), str(db)], how)
    assert (done.returncode, done.stderr.strip()) == (
        status,
        "Stopped before anything was written: the table was left as it was.",
    )
    assert done.stdout == ""
    assert all_ended(workers), done.stderr
    table = lancedb.connect(db).open_table("documents")
    assert table.to_arrow()["text"].to_pylist() == ["The previous table."]


@pytest.mark.skipif(sys.platform != "linux", reason="worker processes and /proc are Linux's")
def test_a_stop_during_a_first_run_says_no_table_was_made(tmp_path):
    docs, db = many_docs(tmp_path / "docs"), tmp_path / "db"
    done, workers = start_and_stop([str(BIN / "lancelot-index"), str(docs), str(db)], "ctrl-c")
    assert (done.returncode, done.stderr.strip()) == (130, "Stopped before anything was written: no table was made.")
    assert all_ended(workers)
    assert not (db / "documents.lance").exists()


def test_an_empty_folder_argument_is_a_usage_error(tmp_path):
    for arguments in (["", str(tmp_path / "db")], [str(tmp_path), ""], [str(tmp_path), "  "]):
        done = subprocess.run([BIN / "lancelot-index", *arguments], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 2
        assert "is empty; name a folder" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(sys.platform != "linux", reason="worker processes and /proc are Linux's")
def test_workers_die_with_a_killed_indexer_and_the_next_run_is_not_locked_out(tmp_path):
    docs = many_docs(tmp_path / "docs")
    db = tmp_path / "db"
    done, workers = start_and_stop([str(BIN / "lancelot-index"), str(docs), str(db)], "sigkill")
    assert done.returncode == -signal.SIGKILL
    assert all_ended(workers), "a worker outlived its indexer"
    again = subprocess.run([BIN / "lancelot-index", "-q", docs, db], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr


def test_a_stop_the_moment_the_workers_start_still_ends_them_all(tmp_path):
    docs = many_docs(tmp_path / "docs")
    for attempt in range(5):
        db = tmp_path / f"db{attempt}"
        done, workers = start_and_stop([str(BIN / "lancelot-index"), str(docs), str(db)], "sigterm", settle=0.0)
        assert done.returncode == 143, done.stderr
        assert "Traceback" not in done.stderr and "Fatal" not in done.stderr
        assert all_ended(workers)


def test_a_stop_whose_exception_a_finalizer_swallowed_is_raised_at_the_next_step(monkeypatch):
    # A signal's handler can run inside a finalizer, where Python ignores what it raises: the stop must not be
    # lost (a run went on to commit and exit 0), nor print a traceback.
    from lancelot_indexer import cli

    monkeypatch.setattr(cli, "_asked", [])
    printed: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", cli._NotingStops(printed.append))

    class Finalised:
        def __del__(self) -> None:
            cli._stop(signal.SIGTERM, None)  # as the handler runs when SIGTERM comes during __del__

    Finalised()  # dropped at once: its Stopped is swallowed
    assert printed == []
    with pytest.raises(cli.Stopped) as stopped:
        cli._stop_if_asked()
    assert stopped.value.signum == signal.SIGTERM

    class Broken:
        def __del__(self) -> None:
            raise ValueError("not a stop")

    Broken()
    assert [type(unraisable.exc_value) for unraisable in printed] == [ValueError]  # the rest as before
