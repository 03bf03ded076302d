"""Time `lancelot-index --embed` against the test endpoint with 50 ms of latency per request.

In one run, over one generated folder of `--chunks` distinct chunks (each about 900 characters, so that
the per-request token budget, not the 2,048-input cap, sets how many requests there are):

* reference: `lancelot-index` without --embed (reading, chunking, writing, full-text index);
* `--embed` with the default concurrency (4) and with `--embed-concurrency 1`, each into a fresh database;
* `--embed` again over the unchanged folder: it must send zero requests.

The embedding time of a run is its wall time minus the reference's. The endpoint answers `bench-16`
vectors (16 wide): it runs on the same two cores as the indexer, and wide fake vectors would measure the
fake endpoint's own CPU, not the indexer's concurrency. Prints a Markdown section for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WORK = ROOT / "bench-work" / "embed"
MODEL, WIDTH = "bench-16", 16
PARAGRAPHS_PER_FILE = 20
VOCABULARY = (
    "table index vacuum query planner tuple page buffer checkpoint replica slot backup restore role grant "
    "schema column constraint trigger function cursor lock deadlock transaction snapshot isolation commit "
    "rollback partition sequence view extension operator cast domain statistics sample histogram cost join "
    "hash merge nested loop scan bitmap heap toast compression archive segment timeline promote standby"
)


def make_docs(folder: Path, chunks: int) -> None:
    """`chunks` distinct paragraphs of about 900 characters, 20 to a file (one chunk each at chunk size 1200)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(7)
    vocabulary = VOCABULARY.split()
    files = -(-chunks // PARAGRAPHS_PER_FILE)
    made = 0
    for number in range(files):
        paragraphs = []
        for _ in range(min(PARAGRAPHS_PER_FILE, chunks - made)):
            words = [f"p{made}"]  # distinct texts: none is deduplicated
            while sum(len(word) + 1 for word in words) < 900:
                words.append(rng.choice(vocabulary))
            paragraphs.append(" ".join(words) + ".")
            made += 1
        (folder / f"doc{number:05}.txt").write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")


@contextmanager
def endpoint(latency_ms: float) -> Iterator[str]:
    """The test endpoint as a subprocess, as a person would start it; yields its base URL."""
    command = [
        sys.executable,
        "-m",
        "tests.support.embedding_server",
        "--port",
        "0",
        "--latency-ms",
        str(latency_ms),
        "--model",
        f"{MODEL}={WIDTH}",
    ]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def requests_so_far(base: str) -> int:
    with urllib.request.urlopen(f"{base}/_stats", timeout=10) as answer:
        return int(json.load(answer)["requests"])


def index(docs: Path, db: Path, base: str, *options: str) -> tuple[float, int, str]:
    """(wall seconds, embedding requests, summary) of one `lancelot-index` run."""
    env = {**os.environ, "OPENAI_BASE_URL": f"{base}/v1", "OPENAI_API_KEY": "sk-test", "EMBEDDING_MODEL": MODEL}
    before = requests_so_far(base)
    started = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "lancelot-index"), str(docs), str(db), *options], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"lancelot-index {' '.join(options)} failed:\n{done.stderr}")
    return seconds, requests_so_far(base) - before, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each configuration; the fastest counts")
    args = parser.parse_args()
    docs = WORK / "docs"
    make_docs(docs, args.chunks)
    runs: dict[str, list[tuple[float, int]]] = {"reference": [], "default": [], "one": []}
    options = {"reference": (), "default": ("--embed",), "one": ("--embed", "--embed-concurrency", "1")}
    with endpoint(args.latency_ms) as base:
        for _ in range(args.repeat):
            for name, flags in options.items():  # interleaved, so that drift in the machine's load is shared
                db = WORK / f"db-{name}"
                shutil.rmtree(db, ignore_errors=True)
                seconds, requests, _ = index(docs, db, base, "--quiet", *flags)
                runs[name].append((seconds, requests))
        rebuild_seconds, rebuild_requests, rebuild_out = index(docs, WORK / "db-default", base, "--embed")
    chunks = next(line for line in rebuild_out.splitlines() if line.startswith("Indexed"))
    best = {name: min(runs[name]) for name in runs}
    embed = {name: best[name][0] - best["reference"][0] for name in ("default", "one")}
    print("## Embedding: `scripts/bench-embed`\n")
    print(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}. Command: `scripts/bench-embed`")
    print(f"(`--chunks {args.chunks} --latency-ms {args.latency_ms:g}`). {chunks}")
    print(
        f"Endpoint: `python -m tests.support.embedding_server --port 0 --latency-ms {args.latency_ms:g} "
        f"--model {MODEL}={WIDTH}` on 127.0.0.1. Fastest of {args.repeat} interleaved runs each.\n"
    )
    print("| run | wall time | embedding time (wall − reference) | requests |")
    print("|---|---|---|---|")
    print(f"| reference: no `--embed` | {best['reference'][0]:.1f} s | – | 0 |")
    for name, label in (("default", "`--embed` (concurrency 4)"), ("one", "`--embed --embed-concurrency 1`")):
        print(f"| {label} | {best[name][0]:.1f} s | {embed[name]:.1f} s | {best[name][1]} |")
    print(f"| `--embed` again, folder unchanged | {rebuild_seconds:.1f} s | – | {rebuild_requests} |")
    print(
        f"\nDefault concurrency against one request at a time: {best['one'][0] / best['default'][0]:.1f}× faster "
        f"in wall time, {embed['one'] / embed['default']:.1f}× in embedding time."
    )
    print(f"Unchanged rebuild: {rebuild_out.splitlines()[-1]}")


if __name__ == "__main__":
    main()
