"""Measure lancedb_search and lancedb_read end to end (MCP SDK client → `lancelot` over stdio) against raw LanceDB.

The table: Debian's Python 3.11 and PostgreSQL 15 HTML manuals, copied as often as needed, indexed by the
real `lancelot-index`, then cut to exactly --rows chunks and written by the indexer's own writer as two
tables: `bench` (the full-text indexes, the n-gram index on the text that the substring match looks words
up in, and the B-tree indexes on `path` and `passage` that reads look rows up by) and `bench_plain` (no
full-text index and no n-gram index, so text search is the substring match, by a scan). Built once under
bench-work/search; a build of an older layout is cut again, or indexed again when its manuals are too.

The worst cases (issue 14): queries BM25 cannot match, so that text search falls back to the substring
match, each timed against the BM25 searches in the same server process, round by round, and reported as a
ratio of medians; then 32 of them at once against one server, with its memory and the BM25 searches
made meanwhile.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
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

from lancelot_schema import logs

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
# The target: a read's median over stdio within this factor of a BM25 search's, in the same run.
READ_TARGET = 1.5
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


def build(rows: int) -> Path:
    """The database with `bench` and `bench_plain`, exactly `rows` chunks each; reused when present."""
    import lancedb

    db = WORK / f"db-{rows}"
    if db.exists():
        connection = lancedb.connect(str(db))
        tables = set(connection.list_tables().tables)
        if {"bench", "bench_plain"} <= tables and _current(connection, "bench") and _ngram(connection, rows):
            return db
        # A `bench` cut by an older version of this script only needs cutting again when the indexed manuals
        # are of the current layout; manuals indexed by an older indexer are indexed again.
        if "documents" in tables and _current(connection, "documents"):
            print(f"{db}: `bench` lacks the current layout's columns or indexes; cutting it again", file=sys.stderr)
            _cut(db, rows)
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


def _current(connection: Any, table: str) -> bool:
    """Whether `table` has every column the indexer writes and every index it builds (B-tree and full text)."""
    from lancelot_schema import layout

    handle = connection.open_table(table)
    indexed = {tuple(index.columns) for index in handle.list_indices()}
    wanted = (*layout.SCALAR_INDEXED_COLUMNS, *layout.FULL_TEXT_COLUMNS)
    return all((column,) in indexed for column in wanted) and set(layout.INDEXER_COLUMNS) <= set(handle.schema.names)


def _ngram(connection: Any, rows: int) -> bool:
    """Whether `bench` has the n-gram index the indexer builds on a table of `rows` rows (bench_plain has none)."""
    from lancelot_indexer.writing import write

    indexed = {(index.index_type, *index.columns) for index in connection.open_table("bench").list_indices()}
    return rows < write.NGRAM_MIN_ROWS or ("NGram", "text") in indexed


def _cut(db: Path, rows: int) -> None:
    """`bench` and `bench_plain`: the first `rows` chunks, written by the indexer's writer (with and without FTS)."""
    from datetime import timedelta

    import pyarrow as pa

    from lancelot_indexer.writing import database, write
    from lancelot_schema import layout

    documents = write.open_table(db, "documents")
    assert documents is not None, db
    data = documents.to_table().slice(0, rows)
    assert data.num_rows == rows, data.num_rows
    metadata = {key.decode(): value.decode() for key, value in (data.schema.metadata or {}).items()}
    # The cut ends inside a document: its rows count only the passages kept, as an index run over them would.
    paths = data.column(layout.PATH).to_pylist()
    last, kept = paths[-1], paths.count(paths[-1])
    totals = data.column(layout.PASSAGES).to_pylist()
    counts = pa.array([kept if path == last else total for path, total in zip(paths, totals, strict=True)], pa.int32())
    data = data.set_column(data.schema.get_field_index(layout.PASSAGES), layout.PASSAGES, counts)
    with database.locked(db):
        for name, fts in (("bench", True), ("bench_plain", False)):
            # Written afresh, so that the writer creates the table and its indexes as on a first index run.
            shutil.rmtree(db / f"{name}.lance", ignore_errors=True)
            write.replace_table(db, name, data, metadata, fts=fts, keep_versions=timedelta(0))


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median": statistics.median(ordered) * 1000,
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000,
        "n": len(ordered),
    }


def server(db: Path, table: str) -> StdioServerParameters:
    env = {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": table, "XDG_CONFIG_HOME": str(WORK / "no-config")}
    env["LANCELOT_TABLES"] = "bench_plain"  # the worst cases search it beside `bench`
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


async def searches_and_reads(db: Path, rounds: int) -> tuple[dict[str, list[float]], str, list[str], list[str]]:
    """BM25 searches and reads of their hits in one server process, round by round (so load hits both alike).

    The hits' ids and sources are gathered first, from one pass over the queries; each round then times the
    20 searches, `lancedb_read` of every hit's id (default before/after) and of every hit's source (from 0).
    """
    times: dict[str, list[float]] = {"search": [], "id": [], "source": []}
    matched = set()
    async with Client(server(db, "bench")) as client:

        async def call(tool: str, arguments: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            if kind is not None:
                times[kind].append(time.perf_counter() - started)
            assert not result.is_error, result.content
            return result.structured_content or {}

        for query in QUERIES[:3]:  # warm: lancedb imported, table open, pages cached
            await call("lancedb_search", {"query": query, "mode": "text"})
        hits = [
            hit for query in QUERIES for hit in (await call("lancedb_search", {"query": query, "mode": "text"}))["hits"]
        ]
        ids = list(dict.fromkeys(str(hit["id"]) for hit in hits))
        sources = list(dict.fromkeys(str(hit["source"]) for hit in hits))
        for id, source in zip(ids[:3], sources[:3], strict=False):  # warm the B-tree indexes' pages too
            await call("lancedb_read", {"id": id})
            await call("lancedb_read", {"source": source})
        for _ in range(rounds):
            for query in QUERIES:
                matched.add((await call("lancedb_search", {"query": query, "mode": "text"}, "search")).get("textMatch"))
            for id in ids:
                await call("lancedb_read", {"id": id}, "id")
            for source in sources:
                await call("lancedb_read", {"source": source, "from": 0}, "source")
    return times, "/".join(sorted(str(m) for m in matched)), ids, sources


async def worst_over_stdio(db: Path, rounds: int) -> tuple[dict[str, list[float]], dict[str, str]]:
    """The worst cases on `bench` (words looked up in the n-gram index) and `bench_plain` (a scan), and the 20
    BM25 searches on `bench`, round by round in one server process, so that load hits them alike."""
    cases = worst_cases()
    times: dict[str, list[float]] = {"bm25": []}
    found: dict[str, str] = {}
    async with Client(server(db, "bench")) as client:

        async def call(arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
            started = time.perf_counter()
            result = await client.call_tool("lancedb_search", {"mode": "text", **arguments})
            elapsed = time.perf_counter() - started
            assert not result.is_error, result.content
            return elapsed, result.structured_content or {}

        for query in QUERIES[:3]:  # warm: lancedb imported, tables open, pages and index parts cached
            await call({"query": query})
            await call({"query": query, "table": "bench_plain"})
        for round_number in range(rounds):
            for query in QUERIES:
                times["bm25"].append((await call({"query": query}))[0])
            for name, arguments in cases.items():
                for table in ("bench", "bench_plain"):
                    elapsed, reply = await call({**arguments, "table": table})
                    times.setdefault(f"{name}|{table}", []).append(elapsed)
                    if round_number == 0:
                        assert reply["textMatch"] == "substring", (name, table, reply.get("textMatch"))
                        found[f"{name}|{table}"] = f"{reply['count']} hits"
    return times, found


def _server_pid() -> int:
    """The `lancelot` process this process spawned (the MCP client does not say)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if parent == os.getpid() and b"lancelot" in command:
            return int(entry.name)
    raise RuntimeError("no lancelot process found among this process's children")


def _memory(pid: int) -> dict[str, float]:
    """The process's resident memory now (VmRSS) and at its peak so far (VmHWM), in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines())
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM")}


async def burst(db: Path, table: str, query: str) -> dict[str, Any]:
    """`BURST` copies of a worst query at once against a fresh server, and BM25 searches one after another
    meanwhile: the server's memory before and at its peak, the burst's wall time, and the BM25 latencies."""
    async with Client(server(db, "bench")) as client:
        for warm in QUERIES[:3]:
            await client.call_tool("lancedb_search", {"query": warm, "mode": "text", "table": table})
        pid = _server_pid()
        before = _memory(pid)
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
                for search in QUERIES:
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
        after = _memory(pid)
    return {"wall": wall, "worst": worst, "meanwhile": meanwhile, "before": before, "after": after}


def reads_in_process(db: Path, ids: list[str], sources: list[str], rounds: int) -> dict[str, list[float]]:
    """The same searches and reads through `Tools` in this process, and the two indexed queries a read runs."""
    from lancelot_schema import layout
    from lancelot_schema.settings import resolve
    from lancelot_server.reading import documents
    from lancelot_server.storage.store import Store, describe
    from lancelot_server.tools import Tools

    settings = resolve({"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "bench"})
    tools = Tools(Store(settings.db_path), settings)
    times: dict[str, list[float]] = {"search": [], "id": [], "source": [], "count": [], "window": []}

    def timed(kind: str, run: Any) -> None:
        started = time.perf_counter()
        run()
        times[kind].append(time.perf_counter() - started)

    try:
        handle = tools.store.table("bench")
        columns = describe(handle.schema, "text", "bench").readable
        for query, id, source in zip(QUERIES[:3], ids[:3], sources[:3], strict=False):  # warm, as over stdio
            tools.search(query, "text")
            tools.read(id=id)
            tools.read(source=source)
        for _ in range(rounds):
            for query in QUERIES:
                timed("search", lambda q=query: tools.search(q, "text"))
            for id in ids:
                timed("id", lambda i=id: tools.read(id=i))
                # What a read by id asks LanceDB: passage 0's `passages` (the count), then the window around N.
                source, number = id.rpartition("#")[0], int(id.rpartition("#")[2])
                count = documents.query(handle, source, 0, 0, [layout.PASSAGES])
                timed("count", lambda q=count: q.to_arrow())
                window = documents.query(handle, source, number - 1, number + 2, columns)
                timed("window", lambda q=window: q.to_arrow())
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
            timed("text", lambda: plain.search().select([layout.text]).limit(None).to_arrow())
            timed("substring", lambda q=query: substring.search(plain, layout, q, core.Wanted(5)))
    return times


def main() -> None:
    global WORK  # --work moves the tables (and the servers' empty config folder)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000, help="chunks in the table (default 100,000)")
    parser.add_argument("--rounds", type=int, default=5, help="passes over the 20 queries in BM25 mode (default 5)")
    parser.add_argument("--substring-rounds", type=int, default=2, help="passes in substring mode (default 2)")
    parser.add_argument("--cold", type=int, default=5, help="fresh server processes for the start-up figures")
    parser.add_argument("--worst-rounds", type=int, default=5, help="passes over the worst cases (default 5)")
    parser.add_argument("--only-worst", action="store_true", help="measure only the worst cases and the burst")
    parser.add_argument("--work", type=Path, default=WORK, help=f"where the tables are built (default {WORK})")
    parser.add_argument(
        "--peer", action="store_true", help="only Lancelot beside qmd on the PostgreSQL manual (bench/peer.py)"
    )
    parser.add_argument("--peer-builds", type=int, default=3, help="with --peer: index builds each (default 3)")
    parser.add_argument("--peer-warm", type=int, default=300, help="with --peer: warm searches each (default 300)")
    options = parser.parse_args()
    logs.configure("WARNING")  # the in-process Tools log to stderr at the spawned servers' level, never to stdout
    WORK = options.work
    WORK.mkdir(parents=True, exist_ok=True)
    if options.peer:
        from bench import peer

        peer.run(WORK, options.cold, options.peer_builds, options.peer_warm)
        return
    db = build(options.rows)

    worst, worst_found = anyio.run(worst_over_stdio, db, options.worst_rounds)
    cases = worst_cases()
    bursts = {
        table: anyio.run(burst, db, table, cases["64 gibberish words"]["query"]) for table in ("bench", "bench_plain")
    }
    load = Path("/proc/loadavg").read_text(encoding="utf-8").split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"\nTable: {options.rows:,} chunks; Python {platform.python_version()}; load average {load}.\n")
    report_worst(worst, worst_found, bursts)
    if options.only_worst:
        return

    cold = anyio.run(cold_starts, db, options.cold)
    stdio, bm25_match, ids, sources = anyio.run(searches_and_reads, db, options.rounds)
    bm25 = stdio["search"]
    substring, substring_match = anyio.run(through_mcp, db, "bench_plain", options.substring_rounds)
    reference = raw(db, options.rounds)
    local = reads_in_process(db, ids, sources, options.rounds)
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
        ("in process: `Tools.search`, BM25, same queries", summary(local["search"])),
        ("raw LanceDB FTS query, same queries, in process", summary(reference["bm25"])),
        (f"`lancedb_search` text, substring ({substring_match}), over stdio", summary(substring)),
        ("in process: `substring.search` (the server's own scan, no MCP)", summary(reference["substring"])),
        ("raw LanceDB: read every readable column of the table", summary(reference["scan"])),
        ("raw LanceDB: read the text column of the table", summary(reference["text"])),
        (f"`lancedb_read` by id ({len(ids)} hits' ids, before 1, after 2), over stdio", summary(stdio["id"])),
        ("in process: `Tools.read` by id", summary(local["id"])),
        ("raw LanceDB: the passage count (passage 0's `passages`, B-tree lookup)", summary(local["count"])),
        ("raw LanceDB: the window (passages N-1 to N+2, B-tree lookup)", summary(local["window"])),
        (f"`lancedb_read` by source ({len(sources)} hits' sources, from 0), over stdio", summary(stdio["source"])),
        ("in process: `Tools.read` by source", summary(local["source"])),
    ]
    load = Path("/proc/loadavg").read_text(encoding="utf-8").split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"\nLoad average {load}.\n")
    print("| what | median | p95 | n |\n|---|---|---|---|")
    for label, figures in rows:
        print(f"| {label} | {figures['median']:.1f} ms | {figures['p95']:.1f} ms | {figures['n']:.0f} |")
    overhead = summary(bm25)["median"] - summary(reference["bm25"])["median"]
    print(f"\nBM25 server overhead over the raw query (medians): {overhead:.1f} ms")
    search_median = summary(bm25)["median"]
    for kind in ("id", "source"):
        median = summary(stdio[kind])["median"]
        ratio = median / search_median
        verdict = "met" if ratio <= READ_TARGET else "not met"
        print(
            f"`lancedb_read` by {kind} ÷ BM25 `lancedb_search`, over stdio (medians): {median:.1f} ms / "
            f"{search_median:.1f} ms = {ratio:.2f}x (target ≤ {READ_TARGET}x: {verdict})"
        )


def report_worst(worst: dict[str, list[float]], found: dict[str, str], bursts: dict[str, dict[str, Any]]) -> None:
    base = summary(worst["bm25"])
    print(
        f"Worst cases over stdio; BM25 (the 20 queries on `bench`, same process, same rounds): median "
        f"{base['median']:.1f} ms, p95 {base['p95']:.1f} ms, n {base['n']:.0f}.\n"
    )
    print(f"| worst case | table | median | p95 | ÷ BM25 median (target ≤ {WORST_TARGET}×) | reply |")
    print("|---|---|---|---|---|---|")
    for key, samples in worst.items():
        if key == "bm25":
            continue
        name, table = key.split("|")
        figures = summary(samples)
        ratio = figures["median"] / base["median"]
        verdict = "met" if ratio <= WORST_TARGET else "**not met**"
        print(
            f"| {name} | `{table}` | {figures['median']:.1f} ms | {figures['p95']:.1f} ms | "
            f"{ratio:.1f}× ({verdict}) | {found[key]} |"
        )
    print(
        f"\n{BURST} × the 64 gibberish words at once, one fresh server each; BM25 searches one after another "
        "meanwhile:\n"
    )
    print(
        "| table | burst wall time | each worst query: median, max | BM25 meanwhile: median, max (n) | "
        "server RSS before → peak |"
    )
    print("|---|---|---|---|---|")
    for table, figures in bursts.items():
        each, meanwhile = figures["worst"], figures["meanwhile"] or [float("nan")]
        print(
            f"| `{table}` | {figures['wall']:.2f} s | {statistics.median(each) * 1000:.0f} ms, "
            f"{max(each) * 1000:.0f} ms | {statistics.median(meanwhile) * 1000:.1f} ms, "
            f"{max(meanwhile) * 1000:.0f} ms ({len(meanwhile)}) | {figures['before']['VmRSS']:.0f} MB → "
            f"{figures['after']['VmHWM']:.0f} MB |"
        )


if __name__ == "__main__":
    main()
