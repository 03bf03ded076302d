"""HTTP mode under load, and the Lambda handler's cold start. Run through `scripts/bench-http`.

1. A table of at least 100,000 chunks: PostgreSQL's HTML manual (Debian's postgresql-doc-15), copied
   as many times as needed and indexed by the real `lancelot-index` (BM25 index included). Reused when
   it is already there; `--db` takes another one (for example the table scripts/bench-search builds).
2. `lancelot --http` on a loopback port; 16 concurrent clients send 5,000 `lancedb_search` calls (text
   mode) as raw JSON-RPC POSTs. Reported: requests/s, median and p99 latency, errors, server RSS.
   References from the same run: the same clients sending `ping` (HTTP, guard and SDK dispatch, no
   tool), and the same searches made in-process straight on LanceDB (no server at all).
3. The Lambda handler: `python -X importtime` of its import in a fresh interpreter, and the first
   invocations of a cold container (tools/list, then the first search).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench import common
from bench.common import POSTGRES_QUERIES

WORK = common.WORK / "http"


def table_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", type=Path, default=WORK / "db", help="database folder (built when missing)")
    parser.add_argument("--rows", type=int, default=100_000, help="least passages in the table")


def build_table(db: Path, target: int) -> int:
    """Index copies of the PostgreSQL manual until the table holds at least `target` passages; its passages."""
    if common.rows(db) < target:
        common.installed(common.POSTGRES_MANUAL)
        corpus = common.copies_for(target, {"": common.POSTGRES_MANUAL}, WORK / "corpus")
        seconds, _ = common.index(corpus, db, "--quiet")
        print(f"indexed {corpus} in {seconds:.0f} s", file=sys.stderr)
    return common.rows(db)


def rss_mib(pid: int) -> float:
    return common.resident_bytes(pid) / 2**20


def search_body(number: int) -> dict[str, object]:
    query = POSTGRES_QUERIES[number % len(POSTGRES_QUERIES)]
    arguments = {"query": query, "mode": "text", "limit": 5}
    return {
        "jsonrpc": "2.0",
        "id": number,
        "method": "tools/call",
        "params": {"name": "lancedb_search", "arguments": arguments},
    }


def ping_body(number: int) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": number, "method": "ping"}


async def load(
    url: str, calls: int, clients: int, body: object, extra: dict[str, str] | None = None
) -> dict[str, float]:
    """`clients` concurrent clients share `calls` POSTs (with `extra` headers); latency of each, errors, wall time."""
    headers = {"accept": "application/json", "mcp-protocol-version": "2025-11-25", **(extra or {})}
    latencies: list[float] = []
    errors = 0
    next_call = 0

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal next_call, errors
        while next_call < calls:
            number = next_call
            next_call += 1
            started = time.perf_counter()
            try:
                answer = await http.post(url, json=body(number), headers=headers)  # type: ignore[operator]
                failed = answer.status_code != 200 or bool(answer.json()["result"].get("isError", False))
            except (httpx.HTTPError, ValueError, KeyError):
                failed = True
            latencies.append(time.perf_counter() - started)
            errors += failed

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        started = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        wall = time.perf_counter() - started
    return {
        "calls": calls,
        "rps": calls / wall,
        "median_ms": common.median_ms(latencies),
        "p99_ms": common.percentile(latencies, 0.99) * 1000,
        "errors": errors,
        "wall_s": wall,
    }


def direct_search_ms(db: Path, rounds: int) -> float:
    """The median of the same BM25 searches made in-process on LanceDB: the floor under any server."""
    import lancedb

    table = lancedb.connect(str(db)).open_table("documents")
    times = []
    for number in range(rounds):
        query = POSTGRES_QUERIES[number % len(POSTGRES_QUERIES)]
        started = time.perf_counter()
        table.search(query, query_type="fts", fts_columns="text").limit(5).to_list()
        times.append(time.perf_counter() - started)
    return common.median_ms(times)


LAMBDA_COLD = """
import json, os, sys, time
started = time.perf_counter()
from lancelot_server.lambda_handler import handler
imported = time.perf_counter()

def post(method, params):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    event = {"rawPath": "/", "headers": {"host": "x", "content-type": "application/json", "accept": "application/json"},
             "requestContext": {"http": {"method": "POST"}}, "body": json.dumps(body), "isBase64Encoded": False}
    return handler(event, None)["statusCode"]

assert post("tools/list", {}) == 200
listed = time.perf_counter()
assert post("tools/call", {"name": "lancedb_search", "arguments": {"query": "vacuum", "mode": "text"}}) == 200
searched = time.perf_counter()
assert post("tools/call", {"name": "lancedb_search", "arguments": {"query": "index", "mode": "text"}}) == 200
warm = time.perf_counter()
print(json.dumps({"import_s": imported - started, "first_list_s": listed - imported,
                  "first_search_s": searched - listed, "warm_search_s": warm - searched}))
"""


def lambda_cold(db: Path, rounds: int) -> dict[str, float]:
    """Cold import (-X importtime, self time summed) and the first invocations, each in a fresh interpreter."""
    env = common.settings_free_env(
        LANCEDB_PATH=str(db), AWS_LAMBDA_FUNCTION_NAME="bench", LANCELOT_ALLOW_UNAUTHENTICATED="1"
    )
    python = str(common.BIN / "python")
    imports, runs = [], []
    for _ in range(rounds):
        out = subprocess.run(
            [python, "-X", "importtime", "-c", "import lancelot_server.lambda_handler"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        imports.append(sum(int(m) for m in re.findall(r"import time:\s+(\d+) \|", out.stderr)) / 1e6)
        run = subprocess.run([python, "-c", LAMBDA_COLD], env=env, capture_output=True, text=True, check=True)
        runs.append(json.loads(run.stdout.strip().splitlines()[-1]))
    result = {"importtime_s": statistics.median(imports)}
    for key in runs[0]:
        result[key] = statistics.median(run[key] for run in runs)
    return result


def lambda_rows(cold: dict[str, float], rounds: int) -> list[tuple[str, str]]:
    ms = {key: value * 1000 for key, value in cold.items()}
    to_search = ms["import_s"] + ms["first_list_s"] + ms["first_search_s"]
    return [
        (f"Lambda handler import, `-X importtime` (median of {rounds})", f"{ms['importtime_s']:.0f} ms"),
        (
            "Lambda cold container: import / first tools/list / first search / warm search",
            " / ".join(f"{ms[key]:.0f}" for key in ("import_s", "first_list_s", "first_search_s", "warm_search_s"))
            + " ms",
        ),
        ("Lambda cold container → first search result (import + both invocations)", f"{to_search:.0f} ms"),
    ]


def report_lambda(db: Path, chunks: int, rounds: int) -> None:
    cold = lambda_cold(db, rounds)
    when = time.strftime("%Y-%m-%d")
    facts = f"{os.cpu_count()} cores, load {common.load_average()}, a table of {chunks:,} chunks"
    print(f"bench-http --lambda-only, {when}, {facts}\n")
    print(common.table_head(["measure", "value"]))
    for measure, value in lambda_rows(cold, rounds):
        print(common.table_row([measure, value]))


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-http", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    table_options(parser)
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5, help="fresh interpreters for the Lambda figures")
    parser.add_argument("--lambda-only", action="store_true", help="only the Lambda handler's cold start")
    args = parser.parse_args()
    chunks = build_table(args.db, args.rows)
    if args.lambda_only:
        report_lambda(args.db, chunks, args.rounds)
        return
    port = common.free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with common.http_server(args.db, port) as server:
        rss_idle = rss_mib(server.pid)
        warmup = asyncio.run(load(url, 2 * args.clients, args.clients, search_body))
        rss_before = rss_mib(server.pid)
        search = asyncio.run(load(url, args.calls, args.clients, search_body))
        rss_after = rss_mib(server.pid)
        ping = asyncio.run(load(url, args.calls, args.clients, ping_body))
    direct = direct_search_ms(args.db, 200)
    cold = lambda_cold(args.db, args.rounds)

    table = [
        (
            f"`lancedb_search` (text/BM25), {args.clients} clients, {args.calls:,} calls",
            f"{search['rps']:.0f} requests/s",
        ),
        ("latency median / p99", f"{search['median_ms']:.1f} ms / {search['p99_ms']:.1f} ms"),
        ("errors", f"{search['errors'] + warmup['errors']}"),
        (
            "server RSS: idle / after warm-up / after the run",
            f"{rss_idle:.0f} / {rss_before:.0f} / {rss_after:.0f} MiB",
        ),
        (
            "reference: `ping` over the same path (HTTP, guard, SDK; no tool)",
            f"{ping['rps']:.0f} requests/s, median {ping['median_ms']:.1f} ms, errors {ping['errors']}",
        ),
        ("reference: the same searches in-process on LanceDB, median", f"{direct:.1f} ms"),
        ("search median ÷ ping median", f"{search['median_ms'] / ping['median_ms']:.1f}×"),
        *lambda_rows(cold, args.rounds),
    ]
    print(f"bench-http, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, a table of {chunks:,} chunks\n")
    print(common.table_head(["measure", "value"]))
    for measure, value in table:
        print(common.table_row([measure, value]))


if __name__ == "__main__":
    main()
