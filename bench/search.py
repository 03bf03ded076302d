"""Measure lancedb_search and lancedb_read end to end (MCP SDK client → `lancelot` over stdio) against raw LanceDB.

The table: bench/search_table.py (Debian's Python 3.11 and PostgreSQL 15 manuals cut to --rows passages, as
`bench` and `bench_plain`). First the worst cases (bench/search_worst.py), then the cold starts, the BM25 and
substring searches, the reads by id and by source over stdio, and the same work in this process through `Tools`
and through LanceDB alone, all on the same queries. With `--peer`, only Lancelot beside qmd (bench/peer.py).
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench import common, search_table, search_worst
from bench.common import PYTHON_AND_POSTGRES_QUERIES
from bench.search_table import WARM_UP, stdio_server
from lancelot_schema import logs

# The target: a read's median over stdio within this factor of a BM25 search's, in the same run.
READ_TARGET = 1.5


async def cold_starts(db: Path, rounds: int) -> dict[str, list[float]]:
    """Spawn → first tools/list reply, and → first search result, each from a fresh process."""
    times: dict[str, list[float]] = {"list": [], "search": []}
    for _ in range(rounds):
        started = time.perf_counter()
        async with Client(stdio_server(db, "bench")) as client:
            await client.list_tools()
            times["list"].append(time.perf_counter() - started)
            result = await client.call_tool("lancedb_search", {"query": PYTHON_AND_POSTGRES_QUERIES[0], "mode": "text"})
            assert not result.is_error, result.content
            times["search"].append(time.perf_counter() - started)
    return times


async def through_mcp(db: Path, table: str, rounds: int) -> tuple[list[float], str]:
    samples: list[float] = []
    matched = set()
    async with Client(stdio_server(db, table)) as client:
        for query in WARM_UP:
            await client.call_tool("lancedb_search", {"query": query, "mode": "text"})
        for _ in range(rounds):
            for query in PYTHON_AND_POSTGRES_QUERIES:
                started = time.perf_counter()
                result = await client.call_tool("lancedb_search", {"query": query, "mode": "text"})
                samples.append(time.perf_counter() - started)
                assert not result.is_error, result.content
                matched.add((result.structured_content or {}).get("textMatch"))
    return samples, "/".join(sorted(str(m) for m in matched))


async def searches_and_reads(db: Path, rounds: int) -> tuple[dict[str, list[float]], str, list[str], list[str]]:
    """BM25 searches and reads of their hits in one server process, round by round (so load hits both alike).

    The hits' ids and sources are gathered first, from one pass over the queries; each round then times the
    20 searches, `lancedb_read` of every hit's id (default before/after) and of every hit's source (from 0).
    """
    times: dict[str, list[float]] = {"search": [], "id": [], "source": []}
    matched = set()
    async with Client(stdio_server(db, "bench")) as client:

        async def call(tool: str, arguments: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            if kind is not None:
                times[kind].append(time.perf_counter() - started)
            assert not result.is_error, result.content
            return result.structured_content or {}

        for query in WARM_UP:
            await call("lancedb_search", {"query": query, "mode": "text"})
        hits = []
        for query in PYTHON_AND_POSTGRES_QUERIES:
            hits += (await call("lancedb_search", {"query": query, "mode": "text"}))["hits"]
        ids = list(dict.fromkeys(str(hit["id"]) for hit in hits))
        sources = list(dict.fromkeys(str(hit["source"]) for hit in hits))
        for id, source in zip(ids[:3], sources[:3], strict=False):  # warm the B-tree indexes' pages too
            await call("lancedb_read", {"id": id})
            await call("lancedb_read", {"source": source})
        for _ in range(rounds):
            for query in PYTHON_AND_POSTGRES_QUERIES:
                matched.add((await call("lancedb_search", {"query": query, "mode": "text"}, "search")).get("textMatch"))
            for id in ids:
                await call("lancedb_read", {"id": id}, "id")
            for source in sources:
                await call("lancedb_read", {"source": source, "from": 0}, "source")
    return times, "/".join(sorted(str(m) for m in matched)), ids, sources


def reads_in_process(db: Path, ids: list[str], sources: list[str], rounds: int) -> dict[str, list[float]]:
    """The same searches and reads through `Tools` in this process, and the two indexed queries a read runs."""
    from lancelot_schema import layout
    from lancelot_server.reading import documents
    from lancelot_server.storage.store import describe

    tools = common.in_process_tools({"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "bench"})
    times: dict[str, list[float]] = {"search": [], "id": [], "source": [], "count": [], "window": []}

    def timed(kind: str, run: Any) -> None:
        times[kind].append(common.timed(run))

    try:
        handle = tools.store.table("bench")
        columns = describe(handle.schema, "text", "bench").readable
        for query, id, source in zip(WARM_UP, ids[:3], sources[:3], strict=False):  # as over stdio
            tools.search(query, "text")
            tools.read(id=id)
            tools.read(source=source)
        for _ in range(rounds):
            for query in PYTHON_AND_POSTGRES_QUERIES:
                timed("search", lambda q=query: tools.search(q, "text"))
            for id in ids:
                timed("id", lambda i=id: tools.read(id=i))
                # What a read by id asks Lance: the document's rows by number (the `path` index), then the window
                # around N taken by row id.
                source, number = id.rpartition("#")[0], int(id.rpartition("#")[2])
                lookup = documents.lookup(handle, source)
                timed("count", lambda q=lookup: q.to_arrow())
                found = lookup.to_arrow()
                numbers, row_ids = found.column(layout.PASSAGE).to_pylist(), found.column("_rowid").to_pylist()
                numbered = dict(zip(numbers, row_ids, strict=True))
                rows = [numbered[n] for n in range(number - 1, number + 3) if n in numbered]
                timed("window", lambda r=rows: handle.take_row_ids(r).select(columns).to_arrow())
            for source in sources:
                timed("source", lambda s=source: tools.read(source=s))
    finally:
        tools.close()
    return times


def raw(db: Path, rounds: int) -> dict[str, list[float]]:
    """The same searches straight through LanceDB in this process (same consistency setting as the server)."""
    from datetime import timedelta

    import lancedb
    from lancedb.query import MatchQuery

    from lancelot_server.search import core, substring
    from lancelot_server.storage.store import describe

    connection = lancedb.connect(str(db), read_consistency_interval=timedelta(0))
    bench, plain = connection.open_table("bench"), connection.open_table("bench_plain")
    layout = describe(plain.schema, "text", "bench_plain")
    columns = [*layout.readable, "_score"]
    times: dict[str, list[float]] = {"bm25": [], "scan": [], "text": [], "substring": []}

    def timed(kind: str, run: Any) -> None:
        times[kind].append(common.timed(run))

    for _ in range(rounds):
        for query in PYTHON_AND_POSTGRES_QUERIES:
            timed(
                "bm25",
                lambda q=query: (
                    bench.search(MatchQuery(q, "text"), query_type="fts").select(columns).limit(5).to_arrow()
                ),
            )
    for _ in range(max(1, rounds // 3)):
        for query in PYTHON_AND_POSTGRES_QUERIES:
            timed("scan", lambda: plain.search().select(layout.readable).limit(None).to_arrow())
            timed("text", lambda: plain.search().select([layout.text]).limit(None).to_arrow())
            timed("substring", lambda q=query: substring.search(plain, layout, q, core.Wanted(5)))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench-search", description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000, help="chunks in the table (default 100,000)")
    parser.add_argument("--rounds", type=int, default=5, help="passes over the 20 queries in BM25 mode (default 5)")
    parser.add_argument("--substring-rounds", type=int, default=2, help="passes in substring mode (default 2)")
    parser.add_argument("--cold", type=int, default=5, help="fresh server processes for the start-up figures")
    parser.add_argument("--worst-rounds", type=int, default=5, help="passes over the worst cases (default 5)")
    parser.add_argument("--only-worst", action="store_true", help="measure only the worst cases and the burst")
    work = search_table.WORK
    parser.add_argument("--work", type=Path, default=work, help=f"where the tables are built (default {work})")
    parser.add_argument(
        "--peer", action="store_true", help="only Lancelot beside qmd on the PostgreSQL manual (bench/peer.py)"
    )
    parser.add_argument("--peer-builds", type=int, default=3, help="with --peer: index builds each (default 3)")
    parser.add_argument("--peer-warm", type=int, default=300, help="with --peer: warm searches each (default 300)")
    options = parser.parse_args()
    common.installed(*search_table.MANUALS.values())
    logs.configure("WARNING")  # the in-process Tools log to stderr at the spawned servers' level, never to stdout
    options.work.mkdir(parents=True, exist_ok=True)
    if options.peer:
        from bench import peer

        peer.run(options.work, options.cold, options.peer_builds, options.peer_warm)
        return
    db = search_table.build(options.rows, options.work)

    worst, worst_found = anyio.run(search_worst.over_stdio, db, options.worst_rounds)
    gibberish = search_worst.worst_cases()["64 gibberish words"]["query"]
    bursts = {table: anyio.run(search_worst.burst, db, table, gibberish) for table in ("bench", "bench_plain")}
    facts = f"Python {platform.python_version()}; load average {common.load_average()}"
    print(f"\nTable: {options.rows:,} chunks; {facts}.\n")
    search_worst.report(worst, worst_found, bursts)
    if options.only_worst:
        return

    cold = anyio.run(cold_starts, db, options.cold)
    stdio, bm25_match, ids, sources = anyio.run(searches_and_reads, db, options.rounds)
    bm25 = stdio["search"]
    substring, substring_match = anyio.run(through_mcp, db, "bench_plain", options.substring_rounds)
    reference = raw(db, options.rounds)
    local = reads_in_process(db, ids, sources, options.rounds)
    start_sdk = [sys.executable, "-c", "import mcp.server.mcpserver"]
    python_start = [common.timed(lambda: subprocess.run(start_sdk, check=True)) for _ in range(options.cold)]

    rows = [
        ("spawn → first `tools/list` reply (fresh process)", cold["list"]),
        ("spawn → first search result (fresh process; imports lancedb, opens the table)", cold["search"]),
        ("reference: `python -c 'import mcp.server.mcpserver'`", python_start),
        (f"`lancedb_search` text, BM25 ({bm25_match}), over stdio", bm25),
        ("in process: `Tools.search`, BM25, same queries", local["search"]),
        ("raw LanceDB FTS query, same queries, in process", reference["bm25"]),
        (f"`lancedb_search` text, substring ({substring_match}), over stdio", substring),
        ("in process: `substring.search` (the server's own scan, no MCP)", reference["substring"]),
        ("raw LanceDB: read every readable column of the table", reference["scan"]),
        ("raw LanceDB: read the text column of the table", reference["text"]),
        (f"`lancedb_read` by id ({len(ids)} hits' ids, before 1, after 2), over stdio", stdio["id"]),
        ("in process: `Tools.read` by id", local["id"]),
        ("raw Lance: the document's rows by number and its passage count (`path` B-tree lookup)", local["count"]),
        ("raw Lance: the window (passages N-1 to N+2, taken by row id)", local["window"]),
        (f"`lancedb_read` by source ({len(sources)} hits' sources, from 0), over stdio", stdio["source"]),
        ("in process: `Tools.read` by source", local["source"]),
    ]
    print(f"\nLoad average {common.load_average()}.\n")
    print(common.table_head(["what", "median", "p95", "n"]))
    for label, samples in rows:
        figures = common.summary(samples)
        print(common.table_row([label, f"{figures['median']:.1f} ms", f"{figures['p95']:.1f} ms", figures["n"]]))
    overhead = common.summary(bm25)["median"] - common.summary(reference["bm25"])["median"]
    print(f"\nBM25 server overhead over the raw query (medians): {overhead:.1f} ms")
    search_median = common.summary(bm25)["median"]
    for kind in ("id", "source"):
        median = common.summary(stdio[kind])["median"]
        ratio = median / search_median
        verdict = "met" if ratio <= READ_TARGET else "not met"
        print(
            f"`lancedb_read` by {kind} ÷ BM25 `lancedb_search`, over stdio (medians): {median:.1f} ms / "
            f"{search_median:.1f} ms = {ratio:.2f}x (target ≤ {READ_TARGET}x: {verdict})"
        )


if __name__ == "__main__":
    main()
