"""Where a whole run's CPU goes, process by process, from Linux process accounting.

    accton FILE; time bash .ci/run; accton off        # as root; Debian's `acct` package has both
    .venv/bin/python -m bench.run_cpu FILE [--depth 6] [--least 4]

Each process's user and system CPU (as `dump-acct` reads them from FILE) summed over its tree of children, shown
as an indented tree down to `--depth`; the children under `--least` CPU-s are grouped by name on one line. A
name is the command's, or the thread's that ended last when a process renamed its threads (Lance's and Ray's
do: "lance_backgroun", "jemalloc_bg_thd"). What charged the suite's processes to the tests that started them
is described in docs/decisions.md, "The suite's CPU, third pass".
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

TICKS = 100  # dump-acct gives the times in the kernel's accounting ticks (AHZ)


@dataclass(frozen=True)
class Process:
    name: str
    cpu: float  # seconds, user + system, its own
    parent: int


def parse(text: str) -> dict[int, Process]:
    """`dump-acct`'s lines: name | version | user | system | elapsed | uid | gid | memory | io | pid | ppid | …"""
    found = {}
    for line in text.splitlines():
        fields = [field.strip() for field in line.split("|")]
        if len(fields) < 11:
            continue
        found[int(fields[9])] = Process(fields[0], (float(fields[2]) + float(fields[3])) / TICKS, int(fields[10]))
    return found


class Tree:
    def __init__(self, processes: dict[int, Process]) -> None:
        self.processes = processes
        self.children: dict[int, list[int]] = defaultdict(list)
        for pid, process in processes.items():
            self.children[process.parent].append(pid)
        self._totals: dict[int, float] = {}

    def total(self, pid: int) -> float:
        """Its CPU and all its descendants'."""
        if pid not in self._totals:
            own = self.processes[pid].cpu if pid in self.processes else 0.0
            self._totals[pid] = own + sum(self.total(child) for child in self.children[pid])
        return self._totals[pid]

    def count(self, pid: int) -> int:
        return 1 + sum(self.count(child) for child in self.children[pid])

    def roots(self) -> list[int]:
        """The processes whose parent ended before accounting began (or was never accounted), largest first."""
        found = [pid for pid, process in self.processes.items() if process.parent not in self.processes]
        return sorted(found, key=self.total, reverse=True)

    def lines(self, pid: int, depth: int, least: float, indent: int = 0) -> list[str]:
        process = self.processes[pid]
        out = [f"{'  ' * indent}{pid} {process.name}: {self.total(pid):.1f} CPU-s ({process.cpu:.1f} its own)"]
        if depth == 0:
            return out
        small: dict[str, list[int]] = defaultdict(list)
        for child in sorted(self.children[pid], key=self.total, reverse=True):
            if self.total(child) >= least:
                out += self.lines(child, depth - 1, least, indent + 1)
            else:
                small[self.processes[child].name].append(child)
        for name, pids in small.items():
            cpu = sum(self.total(child) for child in pids)
            processes = sum(self.count(child) for child in pids)
            out.append(f"{'  ' * (indent + 1)}{len(pids)} × {name}: {cpu:.1f} CPU-s ({processes} processes)")
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path, help="the accounting file accton wrote")
    parser.add_argument("--depth", type=int, default=6, help="how many levels of children to show")
    parser.add_argument("--least", type=float, default=4.0, help="CPU-s under which children are grouped by name")
    parser.add_argument("--roots", type=int, default=5, help="how many trees to show, largest first")
    args = parser.parse_args()
    if shutil.which("dump-acct") is None:
        raise SystemExit("dump-acct is not installed: Debian's acct package has it (apt-get install acct)")
    text = subprocess.run(["dump-acct", str(args.file)], capture_output=True, text=True, check=True).stdout
    tree = Tree(parse(text))
    print(f"{len(tree.processes)} processes, {sum(p.cpu for p in tree.processes.values()):.1f} CPU-s in all")
    for root in tree.roots()[: args.roots]:
        print("\n".join(tree.lines(root, args.depth, args.least)))


if __name__ == "__main__":
    main()
