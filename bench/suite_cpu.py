"""Where the test suite's CPU goes: each test's CPU time, its own and its children's, summed by module.

    PYTHONPATH=$PWD .venv/bin/python -m pytest -n 3 -m "not installs" -q -p no:cacheprovider -p bench.suite_cpu
    .venv/bin/python -m bench.suite_cpu            # the modules and tests that took the most

As a pytest plugin each process (each xdist worker) appends one line a test to its own file under
bench-work/suite-cpu (emptied by the summary's `--clear`): the test's id, the CPU seconds of the process itself
(every thread) and of the children it waited for while the test ran (a server a module shares is counted in the
test whose teardown reaps it), and the wall seconds. The whole run's CPU is `/usr/bin/time` around it; the
difference is collection and pytest's own work (docs/decisions.md, "The test suite on every core").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from bench import common

FOLDER = common.WORK / "suite-cpu"


def cpu() -> tuple[float, float]:
    """CPU seconds so far of this process and of its children waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    # Where the test runs (a worker), not where xdist reports it too (the controller's log hooks).
    own, children, wall = *cpu(), time.monotonic()
    try:
        return (yield)
    finally:
        now_own, now_children = cpu()
        row = [item.nodeid, now_own - own, now_children - children, time.monotonic() - wall]
        FOLDER.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with (FOLDER / f"{worker}-{os.getpid()}.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")


def rows(folder: Path) -> list[tuple[str, float, float, float]]:
    """Every test's line, from every process's file."""
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, own, children, wall = json.loads(line)
            found.append((str(nodeid), float(own), float(children), float(wall)))
    return found


def by_module(found: list[tuple[str, float, float, float]]) -> list[tuple[str, float, float, float, int]]:
    """Per test module: its tests' own CPU, their children's, their wall time and their count, most CPU first."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for nodeid, own, children, wall in found:
        total = sums[nodeid.split("::", 1)[0]]
        total[0], total[1], total[2], total[3] = total[0] + own, total[1] + children, total[2] + wall, total[3] + 1
    ordered = sorted(sums.items(), key=lambda item: -(item[1][0] + item[1][1]))
    return [(module, own, children, wall, int(count)) for module, (own, children, wall, count) in ordered]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.suite_cpu", description=__doc__)
    parser.add_argument("--most", type=int, default=25, help="rows of each table")
    parser.add_argument("--clear", action="store_true", help="empty the folder for the next run, and stop")
    args = parser.parse_args()
    if args.clear:
        shutil.rmtree(FOLDER, ignore_errors=True)
        return
    found = rows(FOLDER)
    own, children = sum(row[1] for row in found), sum(row[2] for row in found)
    print(f"{len(found)} tests: {own:.1f} CPU-s in the test processes, {children:.1f} in their children")
    print("| module | CPU-s | own | children | wall s | tests |\n|---|---|---|---|---|---|")
    for module, mine, theirs, wall, count in by_module(found)[: args.most]:
        print(f"| {module} | {mine + theirs:.1f} | {mine:.1f} | {theirs:.1f} | {wall:.1f} | {count} |")
    print("\n| test | CPU-s | wall s |\n|---|---|---|")
    for nodeid, mine, theirs, wall in sorted(found, key=lambda row: -(row[1] + row[2]))[: args.most]:
        print(f"| {nodeid} | {mine + theirs:.1f} | {wall:.1f} |")


if __name__ == "__main__":
    main()
