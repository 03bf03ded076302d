"""Time `lancelot-index --embed` against the test endpoint with 50 ms of latency per request.

In one run, over one generated folder of `--chunks` distinct chunks (each about 900 characters, so that
the per-request token budget, not the 2,048-input cap, sets how many requests there are):

* reference: `lancelot-index` without --embed (reading, chunking, writing, full-text index);
* `--embed` with the default concurrency (4) and with `--embed-concurrency 1`, each into a fresh database;
* `--embed` again over the unchanged folder: it must send zero requests;
* `--embed local` beside `--embed` over a folder of `--local-chunks`, and the server's query embedding with each
  (`bench/local_embed.py`).

Each `--embed` run is measured whole (wall time) and by its embedding stage, as the command logs it
(`embedded ... seconds=`: from the first text sent to the last vector back, the openai import included);
then `embed_texts` alone, in this process. The endpoint answers each request 50 ms after it came in, its
own work included, as a remote endpoint does; it answers `bench-16` vectors (16 wide), so that the
indexer's CPU measured is its own, not a fake model's 1,536 floats a text to decode and store.
Prints a Markdown section for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import random
import re
import resource
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench import common, local_embed

WORK = common.WORK / "embed"
MODEL, WIDTH = "bench-16", 16
PARAGRAPHS_PER_FILE = 20
VOCABULARY = (
    "table index vacuum query planner tuple page buffer checkpoint replica slot backup restore role grant "
    "schema column constraint trigger function cursor lock deadlock transaction snapshot isolation commit "
    "rollback partition sequence view extension operator cast domain statistics sample histogram cost join "
    "hash merge nested loop scan bitmap heap toast compression archive segment timeline promote standby"
)


def make_docs(folder: Path, chunks: int) -> list[str]:
    """`chunks` distinct paragraphs of about 900 characters, 20 to a file (one chunk each at chunk size 1200).
    Returns the paragraphs."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(7)
    vocabulary = VOCABULARY.split()
    files = -(-chunks // PARAGRAPHS_PER_FILE)
    made = 0
    texts: list[str] = []
    for number in range(files):
        paragraphs = []
        for _ in range(min(PARAGRAPHS_PER_FILE, chunks - made)):
            words = [f"p{made}"]  # distinct texts: none is deduplicated
            while sum(len(word) + 1 for word in words) < 900:
                words.append(rng.choice(vocabulary))
            paragraphs.append(" ".join(words) + ".")
            made += 1
        (folder / f"doc{number:05}.txt").write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
        texts.extend(paragraphs)
    return texts


@dataclass(frozen=True)
class Endpoint:
    url: str
    pid: int

    def requests(self) -> int:
        with urllib.request.urlopen(f"{self.url}/_stats", timeout=10) as answer:
            return int(json.load(answer)["requests"])

    def cpu_seconds(self) -> float:
        """The endpoint process's user + system CPU time so far (Linux /proc)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Run:
    seconds: float
    stage: float | None  # the embedding stage, from the command's log
    requests: int
    indexer_cpu: float
    endpoint_cpu: float
    out: str


@contextmanager
def endpoint(latency_ms: float) -> Iterator[Endpoint]:
    """The test endpoint as a subprocess, as a person would start it."""
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
    with common.embedding_endpoint(command, stderr=subprocess.DEVNULL) as (url, process):
        yield Endpoint(url, process.pid)


def endpoint_env(end: Endpoint) -> dict[str, str]:
    return common.settings_free_env(OPENAI_BASE_URL=f"{end.url}/v1", OPENAI_API_KEY="sk-test", EMBEDDING_MODEL=MODEL)


def index(docs: Path, db: Path, end: Endpoint, *options: str) -> Run:
    """One `lancelot-index` run: wall time, embedding requests, CPU of the indexer and of the endpoint."""
    env = endpoint_env(end)
    before, cpu_before = end.requests(), end.cpu_seconds()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, done = common.index(docs, db, *options, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    indexer_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    logged = re.search(r"\] embedded .*seconds=([0-9.]+)", done.stderr)
    stage = float(logged.group(1)) if logged else None
    return Run(seconds, stage, end.requests() - before, indexer_cpu, end.cpu_seconds() - cpu_before, done.stdout)


def stage_alone(texts: list[str], end: Endpoint, repeat: int) -> dict[int, float]:
    """Fastest wall time of `embed_texts` over `texts` at concurrency 4 and 1, without the command around it."""
    import openai  # noqa: F401 - imported before timing, as the command imports it before embedding

    from lancelot_indexer.embedding.embed import embed_texts

    best: dict[int, float] = {}
    for _ in range(repeat):
        for concurrency in (4, 1):
            seconds = common.timed(
                lambda concurrency=concurrency: embed_texts(
                    texts, model=MODEL, api_key="sk-test", base_url=f"{end.url}/v1", concurrency=concurrency
                )
            )
            best[concurrency] = min(best.get(concurrency, seconds), seconds)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-embed", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each configuration; the fastest counts")
    parser.add_argument("--local-chunks", type=int, default=1_000, help="passages of the --embed local comparison")
    parser.add_argument("--queries", type=int, default=200, help="query embeddings timed on each side")
    args = parser.parse_args()
    docs = WORK / "docs"
    texts = make_docs(docs, args.chunks)
    options = {"reference": (), "default": ("--embed",), "one": ("--embed", "--embed-concurrency", "1")}
    runs: dict[str, list[Run]] = {name: [] for name in options}
    with endpoint(args.latency_ms) as end:
        for _ in range(args.repeat):
            for name, flags in options.items():  # interleaved, so that drift in the machine's load is shared
                db = WORK / f"db-{name}"
                shutil.rmtree(db, ignore_errors=True)
                runs[name].append(index(docs, db, end, *flags))
        rebuild = index(docs, WORK / "db-default", end, "--embed")
        alone = stage_alone(texts, end, args.repeat)
        local_docs = WORK / "docs-local"
        make_docs(local_docs, args.local_chunks)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):  # after the endpoint section, which needs the endpoint no more
            local_embed.run(local_docs, args.local_chunks, WORK, endpoint_env(end), args.repeat, args.queries)
    chunks = next(line for line in rebuild.out.splitlines() if line.startswith("Indexed"))
    best = {name: min(runs[name], key=lambda run: run.seconds) for name in runs}
    embed = {name: best[name].seconds - best["reference"].seconds for name in ("default", "one")}
    stage = {name: min(run.stage for run in runs[name] if run.stage is not None) for name in ("default", "one")}
    print("## Embedding: `scripts/bench-embed`\n")
    print(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}. Command: `scripts/bench-embed`")
    print(f"(`--chunks {args.chunks} --latency-ms {args.latency_ms:g}`). {chunks}")
    print(
        f"Endpoint: `python -m tests.support.embedding_server --port 0 --latency-ms {args.latency_ms:g} "
        f"--model {MODEL}={WIDTH}` on 127.0.0.1. Fastest of {args.repeat} interleaved runs each.\n"
    )
    headers = ["run", "wall time", "wall − reference", "embedding stage (logged)", "requests"]
    print(common.table_head([*headers, "CPU: indexer + endpoint"]))
    labels = {
        "reference": "reference: no `--embed`",
        "default": "`--embed` (concurrency 4)",
        "one": "`--embed --embed-concurrency 1`",
    }
    for name, label in labels.items():
        run = best[name]
        extra, spent = (f"{embed[name]:.1f} s", f"{stage[name]:.2f} s") if name in embed else ("–", "–")
        cpu = f"{run.indexer_cpu:.1f} s + {run.endpoint_cpu:.1f} s"
        print(common.table_row([label, f"{run.seconds:.1f} s", extra, spent, run.requests, cpu]))
    cpu = f"{rebuild.indexer_cpu:.1f} s + {rebuild.endpoint_cpu:.1f} s"
    unchanged = "`--embed` again, folder unchanged"
    print(common.table_row([unchanged, f"{rebuild.seconds:.1f} s", "–", "–", rebuild.requests, cpu]))
    print("\nDefault concurrency against one request at a time:\n")
    print(f"* whole command: {best['one'].seconds / best['default'].seconds:.1f}× faster in wall time;")
    print(f"* the command's embedding stage: {stage['one'] / stage['default']:.1f}× faster;")
    print(
        f"* `embed_texts` alone (in this process, openai imported beforehand): {alone[1] / alone[4]:.1f}× faster "
        f"({alone[4]:.2f} s against {alone[1]:.2f} s)."
    )
    print(f"Unchanged rebuild: {rebuild.out.splitlines()[-1]}")
    print(printed.getvalue(), end="")


if __name__ == "__main__":
    main()
