"""bench-search's worst cases (issue 14): queries BM25 cannot match, so that text search falls back to the substring
match, each timed against the BM25 searches in the same server process, round by round, and reported as a ratio of
medians; then `BURST` of them at once against one server, with its memory and the BM25 searches made meanwhile.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench import common
from bench.common import PYTHON_AND_POSTGRES_QUERIES
from bench.search_table import WARM_UP, stdio_server

# Issue 14's target: no query costs more than this many BM25 searches (medians over stdio, same run).
WORST_TARGET = 10
BURST = 32  # worst queries sent at once to one server


def worst_cases() -> dict[str, dict[str, str]]:
    """Queries text search cannot answer with BM25 (each is checked to fall back to the substring match).

    The gibberish is drawn from a fixed seed, so every run sends the same words; consonants only, so no
    word is a token of the manuals.
    """
    draw = random.Random(14)

    def gibberish(length: int) -> str:
        return "".join(draw.choice("bcdfghjklmnpqrstvwxz") for _ in range(length))

    long_query = ""
    while len(long_query) + 9 <= 2000:
        long_query += gibberish(8) + " "
    return {
        "64 gibberish words": {"query": " ".join(gibberish(8) for _ in range(64))},
        "a 2,000-character query (222 gibberish words)": {"query": long_query.strip()},
        "8 sub-word fragments, each in thousands of passages": {
            "query": "onnect ransact ndex tatist ormaliz xpress enerat ocket"
        },
        "9 punctuation words (nothing the n-gram index holds)": {"query": ":: -> => <> == != {} [] ()"},
        "4 CJK words (an English table)": {"query": "数据库 连接池 事务 隔离级别"},
        "a rare sub-word fragment": {"query": "ormaliz"},
        "an identifier in no passage": {"query": "ZQW-31877"},
        "a `path` prefix that matches nothing": {"query": "connection pooling", "path": "nowhere/"},
    }


async def over_stdio(db: Path, rounds: int) -> tuple[dict[str, list[float]], dict[str, str]]:
    """The worst cases on `bench` (words looked up in the n-gram index) and `bench_plain` (a scan), and the 20
    BM25 searches on `bench`, round by round in one server process, so that load hits them alike."""
    cases = worst_cases()
    times: dict[str, list[float]] = {"bm25": []}
    found: dict[str, str] = {}
    async with Client(stdio_server(db, "bench")) as client:

        async def call(arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
            started = time.perf_counter()
            result = await client.call_tool("lancedb_search", {"mode": "text", **arguments})
            elapsed = time.perf_counter() - started
            assert not result.is_error, result.content
            return elapsed, result.structured_content or {}

        for query in WARM_UP:
            await call({"query": query})
            await call({"query": query, "table": "bench_plain"})
        for round_number in range(rounds):
            for query in PYTHON_AND_POSTGRES_QUERIES:
                times["bm25"].append((await call({"query": query}))[0])
            for name, arguments in cases.items():
                for table in ("bench", "bench_plain"):
                    elapsed, reply = await call({**arguments, "table": table})
                    times.setdefault(f"{name}|{table}", []).append(elapsed)
                    if round_number == 0:
                        assert reply["textMatch"] == "substring", (name, table, reply.get("textMatch"))
                        found[f"{name}|{table}"] = f"{reply['count']} hits"
    return times, found


async def burst(db: Path, table: str, query: str) -> dict[str, Any]:
    """`BURST` copies of a worst query at once against a fresh server, and BM25 searches one after another
    meanwhile: the server's memory before and at its peak (MB), the burst's wall time, and the BM25 latencies."""
    before_start = set(common.process_tree(os.getpid()))
    async with Client(stdio_server(db, "bench")) as client:
        for warm in WARM_UP:
            await client.call_tool("lancedb_search", {"query": warm, "mode": "text", "table": table})
        pid = common.spawned_since(before_start)
        before = common.resident_bytes(pid) / 2**20
        worst: list[float] = []
        meanwhile: list[float] = []
        done = anyio.Event()

        async def one() -> None:
            started = time.perf_counter()
            result = await client.call_tool("lancedb_search", {"query": query, "mode": "text", "table": table})
            worst.append(time.perf_counter() - started)
            assert not result.is_error, result.content

        async def probe() -> None:
            while not done.is_set():
                for search in PYTHON_AND_POSTGRES_QUERIES:
                    started = time.perf_counter()
                    await client.call_tool("lancedb_search", {"query": search, "mode": "text"})
                    meanwhile.append(time.perf_counter() - started)
                    if done.is_set():
                        return

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            group.start_soon(probe)
            async with anyio.create_task_group() as worst_group:
                for _ in range(BURST):
                    worst_group.start_soon(one)
            wall = time.perf_counter() - started
            done.set()
        peak = common.resident_bytes(pid, "VmHWM") / 2**20
    return {"wall": wall, "worst": worst, "meanwhile": meanwhile, "before": before, "peak": peak}


def report(worst: dict[str, list[float]], found: dict[str, str], bursts: dict[str, dict[str, Any]]) -> None:
    base = common.summary(worst["bm25"])
    print(
        f"Worst cases over stdio; BM25 (the 20 queries on `bench`, same process, same rounds): median "
        f"{base['median']:.1f} ms, p95 {base['p95']:.1f} ms, n {base['n']:.0f}.\n"
    )
    print(
        common.table_head(
            ["worst case", "table", "median", "p95", f"÷ BM25 median (target ≤ {WORST_TARGET}×)", "reply"]
        )
    )
    for key, samples in worst.items():
        if key == "bm25":
            continue
        name, table = key.split("|")
        figures = common.summary(samples)
        ratio = figures["median"] / base["median"]
        verdict = "met" if ratio <= WORST_TARGET else "**not met**"
        cells = [name, f"`{table}`", f"{figures['median']:.1f} ms", f"{figures['p95']:.1f} ms"]
        print(common.table_row([*cells, f"{ratio:.1f}× ({verdict})", found[key]]))
    print(
        f"\n{BURST} × the 64 gibberish words at once, one fresh server each; BM25 searches one after another "
        "meanwhile:\n"
    )
    headers = ["table", "burst wall time", "each worst query: median, max", "BM25 meanwhile: median, max (n)"]
    print(common.table_head([*headers, "server RSS before → peak"]))
    for table, figures in bursts.items():
        each, meanwhile = figures["worst"], figures["meanwhile"] or [float("nan")]
        cells = [
            f"`{table}`",
            f"{figures['wall']:.2f} s",
            f"{statistics.median(each) * 1000:.0f} ms, {max(each) * 1000:.0f} ms",
            f"{statistics.median(meanwhile) * 1000:.1f} ms, {max(meanwhile) * 1000:.0f} ms ({len(meanwhile)})",
            f"{figures['before']:.0f} MB → {figures['peak']:.0f} MB",
        ]
        print(common.table_row(cells))
