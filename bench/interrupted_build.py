"""An `--embed local` build stopped by a signal once it has embedded a batch, then run again: what the rerun embeds.

    python -m bench.interrupted_build [--files 20000] [--signal term|int|kill] [--batch 2] [--work DIR]

DOCS is `--files` one-sentence Markdown files (one passage each; the reader hands the writer 8,192 rows a batch).
The first run (`--log-level info`) is stopped `--signal` two seconds after its log says it began embedding batch
`--batch`, so every batch before it was embedded and handed to Lance's writer. The rerun's summary says how many
passages it embedded and how many vectors it found. The model is the tests' all-MiniLM-L6-v2 int8 folder. Run it
from a shell with job control, or with `--signal term`: a background job of a shell without it ignores SIGINT.
"""

from __future__ import annotations

import argparse
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tests.support.local_model import make_model_folder

from bench.common import BIN, WORK

WORDS = [
    "index",
    "table",
    "vacuum",
    "query",
    "planner",
    "row",
    "column",
    "join",
    "sort",
    "hash",
    "merge",
    "replica",
    "backup",
    "restore",
    "lock",
    "page",
    "buffer",
    "cache",
]
SIGNALS = {"term": signal.SIGTERM, "int": signal.SIGINT, "kill": signal.SIGKILL}


def make_docs(root: Path, files: int) -> Path:
    rng = random.Random(7)
    for number in range(files):
        page = root / f"{number // 1000:02}" / f"note{number:05}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"Note {number}: {' '.join(rng.choice(WORDS) for _ in range(12))}.\n", encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--signal", choices=sorted(SIGNALS), default="term")
    parser.add_argument("--batch", type=int, default=2, help="stopped two seconds into this batch's embedding")
    parser.add_argument("--work", default=str(WORK / "interrupted"))
    args = parser.parse_args()
    work = Path(args.work)
    docs = work / f"docs-{args.files}"
    if not docs.is_dir():
        make_docs(docs, args.files)
    db = work / "db"
    shutil.rmtree(db, ignore_errors=True)
    command = [str(BIN / "lancelot-index"), str(docs), str(db), "--embed", f"local:{make_model_folder(work)}"]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--log-level", "info"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    batches = 0
    for line in process.stderr:
        if "embedding" in line.split() and "texts=" in line:
            batches += 1
            print(f"{time.perf_counter() - started:7.1f} s  {line.strip()}", flush=True)
            if batches == args.batch:
                time.sleep(2)
                process.send_signal(SIGNALS[args.signal])
                break
    said = process.communicate()[1].strip().splitlines()
    print(f"stopped: exit {process.returncode}; {said[-1] if said else ''}")
    started = time.perf_counter()
    again = subprocess.run(command, capture_output=True, text=True, check=True)
    print(f"rerun: {time.perf_counter() - started:.0f} s\n{again.stdout}")


if __name__ == "__main__":
    main()
