"""Measure lancedb_search end to end (MCP SDK client → `lancelot` over stdio) against raw LanceDB queries.

The table: Debian's Python 3.11 and PostgreSQL 15 HTML manuals, copied as often as needed, indexed by the
real `lancelot-index`, then cut to exactly --rows chunks in two tables: `bench` (the indexer's full-text
index) and `bench_plain` (none, so text search is the substring match). Built once under bench-work/search.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WORK = ROOT / "bench-work" / "search"
MANUALS = {
    "python": Path("/usr/share/doc/python3.11/html"),
    "postgres": Path("/usr/share/doc/postgresql-doc-15/html"),
}
SKIP = shutil.ignore_patterns("_sources", "_static", "_images", "_downloads", "*.txt", "*.js", "*.css", "*.png")
QUERIES = [
    "connection pooling",
    "create index concurrently",
    "transaction isolation level",
    "asyncio event loop",
    "json decode error",
    "foreign key constraint",
    "list comprehension",
    "vacuum analyze statistics",
    "unicode normalization",
    "regular expression groups",
    "context manager exit",
    "window function partition",
    "subprocess pipe timeout",
    "logical replication slot",
    "dataclass default factory",
    "write ahead log archive",
    "socket timeout error",
    "row level security policy",
    "generator expression",
    "pg_stat_activity",
]


def build(rows: int) -> Path:
    """The database with `bench` and `bench_plain`, exactly `rows` chunks each; reused when present."""
    import lancedb

    db = WORK / f"db-{rows}"
    if db.exists():
        tables = lancedb.connect(str(db)).list_tables().tables
        if {"bench", "bench_plain"} <= set(tables):
            return db
        shutil.rmtree(db)
    docs = WORK / "docs"
    shutil.rmtree(docs, ignore_errors=True)
    copies = 0
    total = 0
    while total < rows:
        copies += 1
        for name, source in MANUALS.items():
            shutil.copytree(source, docs / f"copy{copies}" / name, ignore=SKIP)
        # One copy's chunk count, measured once, tells how many copies the target needs.
        if copies == 1:
            probe = WORK / "probe-db"
            shutil.rmtree(probe, ignore_errors=True)
            _index(docs, probe)
            per_copy = lancedb.connect(str(probe)).open_table("documents").count_rows()
            shutil.rmtree(probe)
            needed = -(-rows // per_copy)
            print(f"one copy of the manuals: {per_copy:,} chunks; using {needed} copies", file=sys.stderr)
            for extra in range(2, needed + 1):
                for name, source in MANUALS.items():
                    shutil.copytree(source, docs / f"copy{extra}" / name, ignore=SKIP)
            copies = needed
            total = per_copy * needed
    _index(docs, db)
    _cut(db, rows)
    return db


def _index(docs: Path, db: Path) -> None:
    started = time.perf_counter()
    subprocess.run([str(BIN / "lancelot-index"), str(docs), str(db), "--quiet"], check=True)
    print(f"indexed {docs} in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def _cut(db: Path, rows: int) -> None:
    """`bench` and `bench_plain`: the first `rows` chunks, with and without the indexer's FTS index."""
    import lancedb
    from lancedb.index import FTS

    from lancelot_indexer.write import FTS_PARAMS

    connection = lancedb.connect(str(db))
    data = connection.open_table("documents").to_arrow().slice(0, rows)
    assert data.num_rows == rows, data.num_rows
    connection.create_table("bench", data).create_index("text", config=FTS(**FTS_PARAMS))
    connection.create_table("bench_plain", data)


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median": statistics.median(ordered) * 1000,
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000,
        "n": len(ordered),
    }


def server(db: Path, table: str) -> StdioServerParameters:
    env = {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": table, "XDG_CONFIG_HOME": str(WORK / "no-config")}
    return StdioServerParameters(command=str(BIN / "lancelot"), args=["--log-level", "WARNING"], env=env)


async def cold_starts(db: Path, rounds: int) -> dict[str, list[float]]:
    """Spawn → first tools/list reply, and → first search result, each from a fresh process."""
    times: dict[str, list[float]] = {"list": [], "search": []}
    for _ in range(rounds):
        started = time.perf_counter()
        async with Client(server(db, "bench")) as client:
            await client.list_tools()
            times["list"].append(time.perf_counter() - started)
            result = await client.call_tool("lancedb_search", {"query": QUERIES[0], "mode": "text"})
            assert not result.is_error, result.content
            times["search"].append(time.perf_counter() - started)
    return times


async def through_mcp(db: Path, table: str, rounds: int) -> tuple[list[float], str]:
    samples: list[float] = []
    matched = set()
    async with Client(server(db, table)) as client:
        for query in QUERIES[:3]:  # warm: lancedb imported, table open, pages cached
            await client.call_tool("lancedb_search", {"query": query, "mode": "text"})
        for _ in range(rounds):
            for query in QUERIES:
                started = time.perf_counter()
                result = await client.call_tool("lancedb_search", {"query": query, "mode": "text"})
                samples.append(time.perf_counter() - started)
                assert not result.is_error, result.content
                matched.add((result.structured_content or {}).get("textMatch"))
    return samples, "/".join(sorted(str(m) for m in matched))


def raw(db: Path, rounds: int) -> dict[str, list[float]]:
    """The same searches straight through LanceDB in this process (same consistency setting as the server)."""
    from datetime import timedelta

    import lancedb
    from lancedb.query import MatchQuery

    from lancelot_server import search
    from lancelot_server.store import describe

    connection = lancedb.connect(str(db), read_consistency_interval=timedelta(0))
    bench, plain = connection.open_table("bench"), connection.open_table("bench_plain")
    layout = describe(plain.schema, "text", "bench_plain")
    columns = [*layout.readable, "_score"]
    times: dict[str, list[float]] = {"bm25": [], "scan": [], "substring": []}

    def timed(kind: str, run: Any) -> None:
        started = time.perf_counter()
        run()
        times[kind].append(time.perf_counter() - started)

    for _ in range(rounds):
        for query in QUERIES:
            timed(
                "bm25",
                lambda q=query: (
                    bench.search(MatchQuery(q, "text"), query_type="fts").select(columns).limit(5).to_arrow()
                ),
            )
    for _ in range(max(1, rounds // 3)):
        for query in QUERIES:
            timed("scan", lambda: plain.search().select(layout.readable).limit(None).to_arrow())
            timed("substring", lambda q=query: search.substring(plain, layout, q, 5, None))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000, help="chunks in the table (default 100,000)")
    parser.add_argument("--rounds", type=int, default=5, help="passes over the 20 queries in BM25 mode (default 5)")
    parser.add_argument("--substring-rounds", type=int, default=2, help="passes in substring mode (default 2)")
    parser.add_argument("--cold", type=int, default=5, help="fresh server processes for the start-up figures")
    options = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    db = build(options.rows)

    cold = anyio.run(cold_starts, db, options.cold)
    bm25, bm25_match = anyio.run(through_mcp, db, "bench", options.rounds)
    substring, substring_match = anyio.run(through_mcp, db, "bench_plain", options.substring_rounds)
    reference = raw(db, options.rounds)
    python_start = []
    for _ in range(options.cold):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
        python_start.append(time.perf_counter() - started)

    rows = [
        ("spawn → first `tools/list` reply (fresh process)", summary(cold["list"])),
        ("spawn → first search result (fresh process; imports lancedb, opens the table)", summary(cold["search"])),
        ("reference: `python -c 'import mcp.server.mcpserver'`", summary(python_start)),
        (f"`lancedb_search` text, BM25 ({bm25_match}), over stdio", summary(bm25)),
        ("raw LanceDB FTS query, same queries, in process", summary(reference["bm25"])),
        (f"`lancedb_search` text, substring ({substring_match}), over stdio", summary(substring)),
        ("in process: `search.substring` (the server's own scan, no MCP)", summary(reference["substring"])),
        ("raw LanceDB: read every readable column of the table", summary(reference["scan"])),
    ]
    load = Path("/proc/loadavg").read_text(encoding="utf-8").split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"\nTable: {options.rows:,} chunks; Python {platform.python_version()}; load average {load}.\n")
    print("| what | median | p95 | n |\n|---|---|---|---|")
    for label, figures in rows:
        print(f"| {label} | {figures['median']:.1f} ms | {figures['p95']:.1f} ms | {figures['n']:.0f} |")
    overhead = summary(bm25)["median"] - summary(reference["bm25"])["median"]
    print(f"\nBM25 server overhead over the raw query (medians): {overhead:.1f} ms")


if __name__ == "__main__":
    main()
