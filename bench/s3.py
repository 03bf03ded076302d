"""First-query and warm-query latency of `lancelot` over stdio on a bucket, against the same table in a folder.

The table: the PostgreSQL 15 HTML manual (or --docs) indexed by the real `lancelot-index` into a folder under
bench-work/s3, then copied into a bucket of moto's S3 server on 127.0.0.1 (tests/support/s3_server.py, IAM
checks on). Each round starts a fresh server per database, in turn: the folder; the bucket as served before issue
30 (LANCELOT_CACHE_MB=0: Lance's default caches, nothing loaded ahead), as served by default (the full-text
indexes loaded into a 256 MiB cache as the table opens; LANCELOT_REFRESH_SECONDS=10) and with a check for a new
version at every call (0); and the same three on a second server that waits --latency-ms before each answer, as a
bucket in the same region costs a round trip. A first query is timed from the server's first tools/list reply (so
it includes importing Lance, the same in every row) and counts the requests it made; warm queries are the
--queries searches after it, their requests counted by operation (list, head, get, ranged get). Each round also
times, for each database, the first search of a fresh Python process from after its imports (`bench.first_query`:
what a Lambda container whose init imported Lance waits for), with the requests it made; a baseline's too.

    scripts/bench-s3 [--rounds 3] [--latency-ms 20]     # prints a Markdown section for docs/benchmarks.md

With --baseline REV, the default bucket rows (cache 256 MiB, refresh 10 s) are also served by REV's `lancelot`
(a worktree with its own venv under bench-work/s3, `bench/quality/baseline.py`), round by round beside the
current code: before and after a change, in one run.

With --index it times the indexer writing instead: `lancelot-index` over the same documents into a new
folder, into a new prefix of the first server and of the second, each a full build, a rebuild that finds
nothing changed, and one after a page changed, with the requests each made.

    scripts/bench-s3 --index [--rounds 1] [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp import Client
from tests.support.s3_server import S3Server, requests, without_aws

from bench import common
from bench.common import PYTHON_AND_POSTGRES_QUERIES
from bench.quality import baseline

WORK = common.WORK / "s3"


@dataclass
class Target:
    name: str
    db: str
    env: dict[str, str]
    log: Path | None = None
    command: Path = common.BIN / "lancelot"
    first: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    first_requests: list[int] = field(default_factory=list)
    warm_requests: list[int] = field(default_factory=list)
    warm_operations: collections.Counter[str] = field(default_factory=collections.Counter)
    # The first search of a fresh process after the imports (`bench.first_query`), and the requests it made.
    fresh: list[float] = field(default_factory=list)
    fresh_requests: list[int] = field(default_factory=list)


OPERATIONS = ("list", "head", "get", "ranged get")


def operation(line: str) -> str:
    """What a logged request is: a listing, a HEAD, a whole GET or a ranged one (or its method)."""
    method, path = line.split(" ")[:2]
    if method == "HEAD":
        return "head"
    if method == "GET" and ("list-type=" in path or "delimiter=" in path):
        return "list"
    if method == "GET":
        return "ranged get" if " Range: " in line else "get"
    return method.lower()


def build(docs: Path) -> Path:
    db = WORK / "db"
    if not (db / "documents.lance").is_dir():
        common.index(docs, db, "--quiet", timeout=1800)
    return db


def counted(target: Target | Writer) -> int:
    return len(requests(target.log)) if target.log else 0


async def one_round(target: Target, queries: list[str]) -> None:
    async with Client(common.stdio_server({**target.env, "LANCEDB_PATH": target.db}, target.command)) as client:
        await client.list_tools()
        before, started = counted(target), time.perf_counter()
        result = await client.call_tool("lancedb_search", {"query": queries[0], "mode": "text"})
        target.first.append(time.perf_counter() - started)
        target.first_requests.append(counted(target) - before)
        assert not result.is_error, result.content
        before, made = counted(target), len(requests(target.log)) if target.log else 0
        for query in queries[1:]:
            started = time.perf_counter()
            result = await client.call_tool("lancedb_search", {"query": query, "mode": "text"})
            target.warm.append(time.perf_counter() - started)
            assert not result.is_error, result.content
        target.warm_requests.append(counted(target) - before)
        if target.log:
            target.warm_operations.update(operation(line) for line in requests(target.log)[made:])


def first_after_import(target: Target, query: str) -> None:
    """The first search of a fresh Python process, timed from after its imports (`bench.first_query`)."""
    env = {**without_aws(common.settings_free_env()), "XDG_CONFIG_HOME": str(WORK / "no-config"), **target.env}
    env["LANCEDB_PATH"] = target.db
    before = counted(target)
    # A baseline's own interpreter runs this tree's bench.first_query (cwd) over its own server's code.
    command = [str(target.command.parent / "python"), "-m", "bench.first_query", query]
    done = subprocess.run(command, env=env, cwd=common.ROOT, capture_output=True, text=True, timeout=600, check=True)
    target.fresh.append(json.loads(done.stdout.splitlines()[-1])["seconds"])
    target.fresh_requests.append(counted(target) - before)


def ms(values: list[float]) -> str:
    return f"{common.median_ms(values):.0f}" if values else "–"


def p90(values: list[float]) -> str:
    return f"{common.percentile(values, 0.9) * 1000:.1f}"


STEPS = ("full build", "rebuild, nothing changed", "rebuild, one page changed")


@dataclass
class Writer:
    """Where the indexer writes (`place(round)`: a new database each round), and what each step took."""

    name: str
    place: Callable[[int], str]
    env: dict[str, str]
    log: Path | None = None
    seconds: dict[str, list[float]] = field(default_factory=lambda: {step: [] for step in STEPS})
    requests: dict[str, list[int]] = field(default_factory=lambda: {step: [] for step in STEPS})


def write_round(writer: Writer, docs: Path, page: Path, number: int) -> None:
    original = page.read_bytes()
    db = writer.place(number)
    environ = {**without_aws(dict(os.environ)), **writer.env}
    try:
        for step in STEPS:
            if step == STEPS[2]:
                page.write_bytes(original + b"\n<p>One more paragraph, about sprockets.</p>\n")
            before = counted(writer)
            writer.seconds[step].append(common.index(docs, db, "--quiet", env=environ, timeout=1800)[0])
            writer.requests[step].append(counted(writer) - before)
    finally:
        page.write_bytes(original)


def prefixes(bucket: str) -> Callable[[int], str]:
    return lambda number: f"s3://{bucket}/db{number}"


def bench_writes(args: argparse.Namespace) -> None:
    docs = WORK / "docs"
    if not docs.is_dir():
        shutil.copytree(args.docs, docs)
    page = sorted(path for path in docs.rglob("*") if path.suffix in (".html", ".md", ".txt"))[0]
    folders = WORK / "written"
    shutil.rmtree(folders, ignore_errors=True)
    with (
        S3Server(log=WORK / "writes-0.log") as fast,
        S3Server(args.latency_ms, log=WORK / f"writes-{args.latency_ms:g}.log") as slow,
    ):

        def folder(number: int) -> str:
            return str(folders / f"db{number}")

        writers = [Writer("folder", folder, {})]
        for server, latency in ((fast, "loopback"), (slow, f"+{args.latency_ms:g} ms a request")):
            writers.append(Writer(f"bucket ({latency})", prefixes(server.bucket()), server.env(), server.log))
        for number in range(args.rounds):
            for writer in writers:
                write_round(writer, docs, page, number)
    print(f"### Object storage: lancelot-index writing ({platform.machine()}, {os.cpu_count()} cores)\n")
    print(f"Documents: {args.docs}; each step is a whole `lancelot-index --quiet` run (start and imports included);")
    print(f"median of {args.rounds} round(s), a new database each round.\n")
    print(common.table_head(["database", *(f"{step} s" for step in STEPS), f"requests: {STEPS[0]}", *STEPS[1:]]))
    for writer in writers:
        times = [f"{statistics.median(writer.seconds[step]):.2f}" for step in STEPS]
        made = [f"{statistics.median(writer.requests[step]):.0f}" if writer.log else "–" for step in STEPS]
        print(common.table_row([writer.name, *times, *made]))
    print(f"\nCommand: `scripts/bench-s3 --index --rounds {args.rounds} --latency-ms {args.latency_ms:g}`")


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench-s3", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, help="the documents to index (default: the PostgreSQL 15 manual)")
    parser.add_argument("--rounds", type=int, default=3)
    searches = len(PYTHON_AND_POSTGRES_QUERIES)
    parser.add_argument("--queries", type=int, default=searches, help="searches per server, the first one cold")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="the second S3 server's wait per request")
    parser.add_argument("--index", action="store_true", help="time lancelot-index writing instead of queries")
    parser.add_argument("--baseline", help="a revision whose server also serves the default bucket rows")
    args = parser.parse_args()
    if args.docs is None:
        common.installed(common.POSTGRES_MANUAL)
        args.docs = common.POSTGRES_MANUAL
    WORK.mkdir(parents=True, exist_ok=True)
    if args.index:
        bench_writes(args)
        return
    db = build(args.docs)
    before = baseline.prepare(args.baseline, WORK) if args.baseline else None
    queries = (PYTHON_AND_POSTGRES_QUERIES * (args.queries // len(PYTHON_AND_POSTGRES_QUERIES) + 1))[: args.queries]
    for log in WORK.glob("requests-*.log"):
        log.unlink()
    with (
        S3Server(log=WORK / "requests-0.log") as fast,
        S3Server(args.latency_ms, log=WORK / f"requests-{args.latency_ms:g}.log") as slow,
    ):
        targets = [Target("folder", str(db), {})]
        for server, latency in ((fast, "loopback"), (slow, f"+{args.latency_ms:g} ms a request")):
            uri = server.database(db, "teams/postgres")
            for cache, refresh in (("0", "10"), ("256", "10"), ("256", "0")):
                env = {**server.env(), "LANCELOT_REFRESH_SECONDS": refresh, "LANCELOT_CACHE_MB": cache}
                served = "before (cache 0)" if cache == "0" else f"cache {cache} MiB"
                name = f"bucket ({latency}), {served}, refresh {refresh} s"
                targets.append(Target(name, uri, env, server.log))
                if before is not None and (cache, refresh) == ("256", "10"):
                    name = f"bucket ({latency}), {before.name}, cache {cache} MiB, refresh {refresh} s"
                    targets.append(Target(name, uri, env, server.log, before.bin / "lancelot"))
        for _ in range(args.rounds):
            for target in targets:
                anyio.run(one_round, target, queries)
                first_after_import(target, queries[0])
    rows = common.rows(db)
    print(f"### Object storage: first and warm query ({platform.machine()}, {os.cpu_count()} cores)\n")
    print(f"Table: {args.docs} indexed by lancelot-index ({rows:,} passages); text search (BM25) over stdio;")
    print(f"{args.rounds} rounds, a fresh server per database per round, {len(queries) - 1} warm queries each.\n")
    headers = ["database", "first query ms (median)", "first after the import ms", "warm query ms (median)"]
    headers += ["warm p90", "requests: first", "first after the import", "a warm query"]
    print(common.table_head([*headers, *(f"warm: {name}" for name in OPERATIONS)]))
    for target in targets:
        first_requests = f"{statistics.median(target.first_requests):.0f}" if target.log else "–"
        fresh = f"{statistics.median(target.fresh_requests):.0f}" if target.log and target.fresh else "–"
        warm = max(1, len(target.warm))
        per_warm = f"{sum(target.warm_requests) / warm:.2f}" if target.log else "–"
        kinds = [f"{target.warm_operations[name] / warm:.2f}" if target.log else "–" for name in OPERATIONS]
        cells = [target.name, ms(target.first), ms(target.fresh), ms(target.warm), p90(target.warm), first_requests]
        cells += [fresh, per_warm, *kinds]
        print(common.table_row(cells))
    against = f" --baseline {args.baseline}" if args.baseline else ""
    print(f"\nCommand: `scripts/bench-s3 --rounds {args.rounds} --latency-ms {args.latency_ms:g}{against}`")


if __name__ == "__main__":
    main()
