"""bench/common.py: what the benchmarks share, on real processes, folders and the real indexer."""

import os
import subprocess
import sys

import pytest

from bench import common


def test_tables_print_as_markdown():
    assert common.table_head(["what", "median"]) == "| what | median |\n|---|---|"
    assert common.table_row(["search", 1.5, 3]) == "| search | 1.5 | 3 |"


def test_percentile_takes_the_nearest_rank():
    samples = [float(value) for value in range(20, 0, -1)]  # 20 down to 1, unsorted on purpose
    assert common.percentile(samples, 0.0) == 1
    assert common.percentile(samples, 0.5) == 11  # rank round(9.5) = 10 of 0..19
    assert common.percentile(samples, 0.95) == 19
    assert common.percentile(samples, 1.0) == 20
    assert common.summary([0.001, 0.002, 0.004]) == {"median": 2.0, "p95": 4.0, "n": 3}


def test_settings_free_env_drops_the_callers_settings(monkeypatch):
    for name in ("LANCEDB_PATH", "LANCELOT_AUTH_TOKENS", "OPENAI_API_KEY", "EMBEDDING_MODEL", "PYTHONPATH"):
        monkeypatch.setenv(name, "the caller's")
    env = common.settings_free_env(LANCEDB_PATH="/db")
    assert env["LANCEDB_PATH"] == "/db"
    assert not {"LANCELOT_AUTH_TOKENS", "OPENAI_API_KEY", "EMBEDDING_MODEL", "PYTHONPATH"} & set(env)
    assert env["PATH"] == os.environ["PATH"]


def test_a_started_process_is_found_and_measured_until_it_ends():
    before = set(common.process_tree(os.getpid()))
    ready = "import time; print('ready', flush=True); time.sleep(30)"
    with subprocess.Popen([sys.executable, "-c", ready], stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"  # running, not just forked
            assert common.spawned_since(before) == child.pid
            assert common.resident_bytes(child.pid) > 1_000_000
            assert common.resident_bytes(child.pid, "VmHWM") >= common.resident_bytes(child.pid)
        finally:
            child.kill()
    assert child.pid not in common.process_tree(os.getpid())
    assert common.resident_bytes(child.pid) == 0


def test_copies_are_made_once_and_kept(tmp_path):
    source = tmp_path / "manual"
    source.mkdir()
    (source / "page.html").write_text("<p>one</p>", encoding="utf-8")
    folder = common.copies({"manual": source}, tmp_path / "copies", 2)
    copied = [folder / f"copy-{number:02d}" / "manual" / "page.html" for number in range(2)]
    assert [path.read_text(encoding="utf-8") for path in copied] == ["<p>one</p>"] * 2
    assert not copied[0].samefile(copied[1])  # real copies: the indexer reads a hard-linked file once
    copied[0].write_text("<p>changed</p>", encoding="utf-8")
    common.copies({"manual": source}, folder, 3)
    assert copied[0].read_text(encoding="utf-8") == "<p>changed</p>"
    assert (folder / "copy-02" / "manual" / "page.html").exists()


def test_a_failed_index_run_stops_with_the_indexers_message(tmp_path):
    with pytest.raises(SystemExit) as stopped:
        common.index(tmp_path / "no-such-folder", tmp_path / "db", "--quiet")
    command, said = str(stopped.value).split("\n", 1)
    assert command.endswith("failed (exit 1):")
    assert "no-such-folder" in said  # the indexer's own words, not a traceback
