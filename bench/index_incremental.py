"""Incremental rebuilds, a rebuild that finds nothing changed beside qmd, and peak memory: the parts of
`scripts/bench-index` besides `speed` (`incremental`, `noop`, `memory`, `fts`; bench/index.py runs them), each
printing its own table.

* incremental: the PostgreSQL manual copied until the folder holds at least 100,000 passages; per round a
  full build into a fresh database, then one page changed (a paragraph added) and the rebuild timed; the
  ratio of the rebuild to that round's full build (target: at most 10%).
* noop: the manual indexed once; then rounds alternating `lancelot-index` of the unchanged folder and
  `qmd update` of the same pages as Markdown (bench/qmd.py), each timed from start to exit.
* memory: the manual copied 32 times (about 500 MB of HTML), and one copy, each indexed into a fresh
  database; the peak resident memory of the indexer with its worker processes (summed, sampled every
  10 ms) and of the indexer process alone (target: 32 copies at most 3x one copy).
* fts: on a copy of the 100,000-passage table, a share of its pages changed and merged, then the indexes
  brought up to date as delta segments or folded whole (with compaction), for shares from 1% to 40%.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import threading
import time
from pathlib import Path

from bench import common

WORK = common.WORK / "index"
SOURCE = common.POSTGRES_MANUAL
PASSAGES_PER_COPY = 9_116  # of the manual (docs/benchmarks.md); checked against the built table
EDITED = "copy-03/sql-vacuum.html"


def load() -> str:
    return common.load_average(3)


def copies(count: int) -> Path:
    """`WORK/copies/copy-00 …`: real copies of the manual."""
    return common.copies({"": SOURCE}, WORK / "copies", count)


def corpus(name: str, count: int) -> Path:
    """A folder holding the first `count` copies, as hard links (no disk; distinct files for the walk)."""
    return common.linked(copies(count), WORK / name, count)


def index(docs: Path, db: Path, *extra: str) -> tuple[float, str]:
    """Seconds one `lancelot-index` run takes, start to exit, and what it printed."""
    seconds, done = common.index(docs, db, *extra)
    return seconds, done.stdout


def edit(page: Path, round_number: int, original: bytes) -> None:
    """A new paragraph in `page`, written to a new file (breaking the hard link to the shared copy)."""
    marker = b"</body>"
    text = original.replace(marker, b"<p>Edited in round %d: zeppelin%d.</p>%s" % (round_number, round_number, marker))
    temporary = page.with_name(page.name + ".tmp-bench")
    temporary.write_bytes(text)
    temporary.replace(page)


def incremental(rounds: int) -> None:
    docs = corpus("corpus100k", -(-100_000 // PASSAGES_PER_COPY))
    db = WORK / "db100k"
    page = docs / EDITED
    original = (copies(1) / "copy-00" / "sql-vacuum.html").read_bytes()
    print(f"## incremental: {docs} ({len(list(docs.iterdir()))} copies), load average before: {load()}")
    headers = ["round", "full build", "one page changed: rebuild", "ratio", "rebuild of the unchanged folder"]
    print(common.table_head([*headers, "load"]))
    ratios = []
    try:
        for number in range(1, rounds + 1):
            edit(page, 0, original)
            shutil.rmtree(db, ignore_errors=True)
            full, printed = index(docs, db, "--quiet")
            edit(page, number, original)
            changed, printed = index(docs, db)
            assert "Since the last build: 1 document read (new or changed)" in printed, printed
            unchanged, _ = index(docs, db, "--quiet")
            ratios.append(changed / full)
            cells = [f"{full:.2f} s", f"{changed:.2f} s", f"**{changed / full:.1%}**", f"{unchanged:.2f} s", load()]
            print(common.table_row([number, *cells]))
    finally:
        temporary = page.with_name(page.name + ".tmp-bench")
        temporary.write_bytes(original)
        temporary.replace(page)
    passages = printed.split(" into ")[1].split(" chunks")[0]
    print(f"\n{passages} passages; median ratio {statistics.median(ratios):.1%} (target: at most 10%)")


def noop(rounds: int) -> None:
    from bench.qmd import Qmd, markdown_copy

    db = WORK / "noop-db"
    shutil.rmtree(db, ignore_errors=True)
    index(SOURCE, db, "--quiet")
    qmd = Qmd.install(common.WORK)
    pages = markdown_copy(SOURCE, common.WORK / "qmd" / "pg-md")
    qmd.collection(pages, "pg")
    print(f"## no-op rebuild of {SOURCE} beside {qmd.version()}: `qmd update` of the same pages as Markdown")
    print(f"load average before: {load()}\n")
    print(common.table_head(["round", "`lancelot-index --quiet DOCS DB`", "`qmd update`", "load"]))
    ours, theirs = [], []
    for number in range(1, rounds + 1):
        ours.append(index(SOURCE, db, "--quiet")[0])
        theirs.append(qmd.timed("update"))
        print(common.table_row([number, f"{ours[-1]:.3f} s", f"{theirs[-1]:.3f} s", load()]))
    best, median = min(ours), statistics.median(ours)
    print(
        f"\nbest {best:.3f} s vs {min(theirs):.3f} s, median {median:.3f} s vs {statistics.median(theirs):.3f} s: "
        f"lancelot-index takes {median / statistics.median(theirs):.2f}x qmd's time (target: at most 1x)"
    )


def peak_memory(docs: Path, db: Path) -> tuple[float, float, float]:
    """Seconds, the peak summed RSS of the indexer and its workers, and the indexer's own peak (MB)."""
    shutil.rmtree(db, ignore_errors=True)
    started = time.perf_counter()
    process = subprocess.Popen([common.BIN / "lancelot-index", "--quiet", docs, db])
    peaks = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            tree = common.process_tree(process.pid)
            peaks[0] = max(peaks[0], sum(map(common.resident_bytes, tree)))
            peaks[1] = max(peaks[1], common.resident_bytes(process.pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"lancelot-index failed on {docs}")
    seconds = time.perf_counter() - started
    own = max(peaks[1], usage.ru_maxrss * 1024)  # ru_maxrss: KB on Linux, the process's own peak
    return seconds, peaks[0] / 1e6, own / 1e6


def memory(rounds: int) -> None:
    many = copies(32)
    one = corpus("corpus1", 1)
    size = sum(path.stat().st_size for path in many.rglob("*.html")) / 1e6
    print(f"## memory: {many} (32 copies, {size:.0f} MB of HTML) and one copy; load average before: {load()}\n")
    headers = ["round", "folder", "time", "peak RSS, indexer + workers", "peak RSS, indexer alone", "load"]
    print(common.table_head(headers))
    results: dict[str, list[tuple[float, float, float]]] = {"1 copy": [], "32 copies": []}
    for number in range(1, rounds + 1):
        for name, docs in (("1 copy", one), ("32 copies", many)):
            seconds, tree, own = peak_memory(docs, WORK / f"memory-db-{name.split()[0]}")
            results[name].append((seconds, tree, own))
            print(common.table_row([number, name, f"{seconds:.1f} s", f"{tree:.0f} MB", f"{own:.0f} MB", load()]))
    one_tree = statistics.median(r[1] for r in results["1 copy"])
    many_tree = statistics.median(r[1] for r in results["32 copies"])
    one_own = statistics.median(r[2] for r in results["1 copy"])
    many_own = statistics.median(r[2] for r in results["32 copies"])
    print(
        f"\nmedian peak, indexer + workers: {many_tree:.0f} MB vs {one_tree:.0f} MB = **{many_tree / one_tree:.2f}x**; "
        f"indexer alone: {many_own:.0f} MB vs {one_own:.0f} MB = {many_own / one_own:.2f}x (target: at most 3x)"
    )


def fts(rounds: int) -> None:
    # Run inside this venv, where Lance is; the table comes from the incremental part (built if missing).
    import lance
    import pyarrow as pa
    import pyarrow.compute as pc

    source = WORK / "db100k" / "documents.lance"
    if not source.is_dir():
        index(corpus("corpus100k", -(-100_000 // PASSAGES_PER_COPY)), WORK / "db100k", "--quiet")
    paths = sorted(set(lance.dataset(str(source)).to_table(columns=["path"]).column("path").to_pylist()))
    scratch = WORK / "fts-scratch.lance"
    print(f"## full-text indexes after a merge, by share of pages changed; load average before: {load()}\n")
    headers = ["share of pages", "rows merged", "merge", "indexes as deltas", "folded whole (compact + merge)"]
    print(common.table_head([*headers, "load"]))
    for share in (0.01, 0.05, 0.10, 0.20, 0.40):
        timings = {}
        for mode in ("delta", "fold"):
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(source, scratch)
            dataset = lance.dataset(str(scratch))
            chosen = paths[: max(1, int(len(paths) * share))]
            rows = dataset.to_table(filter=pc.field("path").isin(chosen))
            texts = pa.array([text + " zeppelin" for text in rows.column("text").to_pylist()])
            rows = rows.set_column(rows.schema.get_field_index("text"), "text", texts)
            quoted = ", ".join("'" + path.replace("'", "''") + "'" for path in chosen)
            started = time.perf_counter()
            merge = dataset.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
            merge.when_not_matched_by_source_delete(f"path IN ({quoted})").execute(rows)
            merged = time.perf_counter() - started
            dataset = lance.dataset(str(scratch))
            started = time.perf_counter()
            if mode == "delta":
                dataset.optimize.optimize_indices(num_indices_to_merge=0)
            else:
                dataset.optimize.compact_files()
                dataset.optimize.optimize_indices()
            timings[mode] = (merged, time.perf_counter() - started, rows.num_rows)
        merged, delta, count = timings["delta"]
        cells = [f"{share:.0%}", count, f"{merged:.2f} s", f"{delta:.2f} s", f"{timings['fold'][1]:.2f} s", load()]
        print(common.table_row(cells))
    shutil.rmtree(scratch, ignore_errors=True)


PARTS = {"incremental": incremental, "noop": noop, "memory": memory, "fts": fts}
