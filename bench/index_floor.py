"""Lance's own share of an index run, with none of Lancelot's code: import, write, index builds.

    .venv/bin/python -m bench.index_floor DB ROUNDS  ->  one JSON line (seconds, best round)

Each round is a fresh interpreter that imports pyarrow and Lance, writes the rows `lancelot-index` put
in DB to a scratch table, and builds the same indexes (full text on each of layout.FULL_TEXT_COLUMNS,
B-tree on each of layout.SCALAR_INDEXED_COLUMNS). No pipeline on Lance can finish faster than this,
which bounds the ratio `scripts/bench-index` can show (bench/index.py runs `lance_alone`). Like the
indexer's whole run, it counts the interpreter's start and exit (`process`: the round's wall time seen from
here, less the parts timed inside and less reading DB's rows, which only sets the round up).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

ROUND = r"""
import json, shutil, sys, time
started = time.perf_counter()
import lance, pyarrow
imported = read_started = time.perf_counter()
from lancelot_schema.languages import DEFAULT, FTS_PARAMS
from lancelot_schema import layout
db = sys.argv[1]
rows = lance.dataset(f"{db}/{layout.DEFAULT_TABLE}.lance").to_table(columns=list(layout.INDEXER_COLUMNS))
scratch = f"{db}-floor"
shutil.rmtree(scratch, ignore_errors=True)
before_write = time.perf_counter()
dataset = lance.write_dataset(rows, f"{scratch}/{layout.DEFAULT_TABLE}.lance", mode="create")
written = time.perf_counter()
for column in layout.FULL_TEXT_COLUMNS:
    dataset.create_scalar_index(column, "INVERTED", name=f"{column}_idx", **FTS_PARAMS[DEFAULT])
for column in layout.SCALAR_INDEXED_COLUMNS:
    dataset.create_scalar_index(column, "BTREE", name=f"{column}_idx")
indexed = time.perf_counter()
shutil.rmtree(scratch)
parts = {"import": imported - started, "write": written - before_write, "fts": indexed - written}
print(json.dumps({**parts, "read": before_write - read_started, "cleanup": time.perf_counter() - indexed}))
"""


def lance_alone(db: str, rounds: int) -> dict[str, float]:
    """The best of `rounds` rounds over DB: seconds of each part, and their total."""
    results = []
    for _ in range(rounds):
        spawned = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", ROUND, db], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - spawned
        timed = json.loads(done.stdout)
        parts = {name: timed[name] for name in ("import", "write", "fts")}
        parts["process"] = wall - sum(parts.values()) - timed["read"] - timed["cleanup"]
        results.append(parts)
    best = min(results, key=lambda result: sum(result.values()))
    return {**best, "total": sum(best.values())}


def main() -> None:
    print(json.dumps(lance_alone(sys.argv[1], int(sys.argv[2]))))


if __name__ == "__main__":
    main()
