"""CPU time of the indexer's reading alone (read, parse, chunk, hash) over every page of a folder, in one process.

    .venv/bin/python -m bench.read_cpu [DOCS] [ROUNDS]

DOCS defaults to Debian's PostgreSQL 15 HTML manual; prints the best of ROUNDS (default 5) in seconds. To compare
with another commit's readers in the same run, put a worktree's indexer first on the path:
`PYTHONPATH=WORKTREE/indexer/src .venv/bin/python -m bench.read_cpu`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from bench import common
from lancelot_indexer.documents import collect
from lancelot_schema.layout import DEFAULT_CHUNK_SIZE


def main() -> None:
    docs = Path(sys.argv[1]) if len(sys.argv) > 1 else common.POSTGRES_MANUAL
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    found = collect.walked(docs).found
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for item in found:
            collect.read_document(item, DEFAULT_CHUNK_SIZE)
        best = min(best, time.process_time() - started)
    print(f"{len(found)} files read in {best:.3f} s of CPU (best of {rounds}; {collect.__file__})")


if __name__ == "__main__":
    main()
