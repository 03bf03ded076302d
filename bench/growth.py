"""How building, searching, reading and the server's memory grow with the table (issue 30): 10k, 100k, 1M passages.

The tables: Debian's PostgreSQL 15 HTML manual (or --docs) copied --copies times (default 1, 11 and 111: about
9,000, 100,000 and 1,000,000 passages), each copy in a folder of its own so that every path is distinct, each
count indexed by the real `lancelot-index` into a database of its own under bench-work/growth, timed from start
to exit with the peak resident memory of the indexer and its workers (summed, sampled every 10 ms). A table is
built once and kept with what its build measured (`build-N.json` beside it); --rebuild builds it again.

Then, per table, a fresh `lancelot` over stdio (the MCP SDK's client, as bench-search) on the folder and, with
--bucket, on a copy of the folder in a bucket of moto's S3 server on 127.0.0.1 (as bench-s3; not a table with a
data file larger than MOTO_LARGEST, which moto cannot serve ranges of at speed): the first text search after the
server's first reply, then round by round text searches (BM25), searches that fall back to the substring match,
reads by id of the text searches' hits, searches filtered by file type (every row passes) and by a `path`
prefix (one copy's SQL reference), `lancedb_status` and the first page of `resources/list`: medians and p95,
the server's resident memory after them and at its peak, and on a bucket the requests a timed text search made
(moto's log).

With --cache-mb, the servers on a bucket run at each LANCELOT_CACHE_MB given in turn, on the same upload. With
--beside DIR, the tables kept under DIR (the same copies, built by other code: `--work DIR` of another checkout) are
served from a folder in turn with these, round by round, and the medians compared: before and after in one run.

    scripts/bench-growth [--copies 1 11 111] [--rounds 3] [--bucket [--cache-mb 256 1024]] [--rebuild]   # Markdown
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench import common
from bench.common import POSTGRES_QUERIES
from bench.index_incremental import peak_memory

WORK = common.WORK / "growth"
# Issue 30's targets, 1M passages against 100k: the text search median, and the server's memory after the queries.
TEXT_TARGET = 3
RSS_TARGET = 2
# Words BM25 finds in no passage, so that text search falls back to the substring match (checked on each reply):
# fragments of words of the manual, rare and common, and an identifier in no passage.
SUBSTRING_QUERIES = ["ormaliz", "utovacuu", "eplicatio", "ZQW-31877", "ransactio"]
FILTERS: dict[str, dict[str, Any]] = {
    "filter: file type html (every row)": {"types": ["html"]},
    "filter: path prefix copy-00/sql- (one copy's SQL reference)": {"path": "copy-00/sql-"},
}
KINDS = ("first text search", "text (BM25)", "substring fallback", "read by id", *FILTERS, "status", "resources")
WARM_UP = 2  # queries of each kind sent first, not timed
# moto reads a whole object to answer a ranged GET of it: 4 KiB of a 552 MB data file (the 1M table's before
# data files were capped) took 1.16 s against 13 ms from a 5 MB one, so a table with a file larger than this
# measures moto, not the server (`python -m bench.moto_ranges`). Data files only: every query reads them, where
# the n-gram index (243 MB at 1M) is read by the substring fallback alone, whose figures on moto then say so.
MOTO_LARGEST = 200_000_000


@dataclass
class Served:
    """What one server measured: seconds per query kind, and its memory in bytes (after the queries, peak)."""

    times: dict[str, list[float]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    rss: int = 0
    peak: int = 0
    # On a bucket: the requests the timed text searches made (the S3 server's log), and how many searches.
    text_requests: list[int] = field(default_factory=list)


def build(docs: Path, count: int, work: Path, rebuild: bool) -> tuple[Path, dict[str, Any]]:
    """The database of `count` copies of `docs`, and what its build measured; built when missing or `rebuild`."""
    db, record = work / f"db-{count}", work / f"build-{count}.json"
    if not rebuild and record.exists() and (db / "documents.lance").is_dir():
        return db, json.loads(record.read_text(encoding="utf-8"))
    pool = common.copies({"": docs}, work / "copies", count)
    corpus = common.linked(pool, work / f"docs-{count}", count)
    load = common.load_average(3)
    seconds, tree, own = peak_memory(corpus, db)
    built: dict[str, Any] = {
        "copies": count,
        "passages": common.rows(db),
        "seconds": seconds,
        "tree_mb": tree,
        "own_mb": own,
    }
    built |= {"load": f"{load} → {common.load_average(3)}", "megabytes": _size(db) / 1e6}
    record.write_text(json.dumps(built), encoding="utf-8")
    return db, built


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


async def serve(env: dict[str, str], rounds: int, log: Path | None = None) -> Served:
    """One fresh server over `env`: the first text search, then `rounds` of every kind, then its memory; with the
    S3 server's `log`, the requests of each timed text search."""
    from tests.support.s3_server import requests

    served = Served()
    before = set(common.process_tree(os.getpid()))
    async with Client(common.stdio_server(env)) as client:

        async def call(kind: str | None, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            if kind is not None:
                served.times[kind].append(time.perf_counter() - started)
            assert not result.is_error, (tool, arguments, result.content)
            return result.structured_content or {}

        async def listed(kind: str | None) -> None:
            started = time.perf_counter()
            await client.list_resources()
            if kind is not None:
                served.times[kind].append(time.perf_counter() - started)

        await client.list_tools()
        await call("first text search", "lancedb_search", {"query": POSTGRES_QUERIES[0], "mode": "text"})
        ids: list[str] = []
        for query in POSTGRES_QUERIES:  # the hits read by id, and the text searches warmed
            ids += [str(hit["id"]) for hit in (await call(None, "lancedb_search", {"query": query}))["hits"][:1]]
        for query in SUBSTRING_QUERIES:
            reply = await call(None, "lancedb_search", {"query": query, "mode": "text"})
            assert reply.get("textMatch") == "substring", (query, reply.get("textMatch"))
        for arguments in [*FILTERS.values()][:WARM_UP]:
            await call(None, "lancedb_search", {"query": POSTGRES_QUERIES[0], "mode": "text", **arguments})
        for id in ids[:WARM_UP]:
            await call(None, "lancedb_read", {"id": id})
        await call(None, "lancedb_status", {})
        await listed(None)
        for _ in range(rounds):
            for query in POSTGRES_QUERIES:
                seen = len(requests(log)) if log else 0
                await call("text (BM25)", "lancedb_search", {"query": query, "mode": "text"})
                if log:
                    served.text_requests.append(len(requests(log)) - seen)
            for query in SUBSTRING_QUERIES:
                await call("substring fallback", "lancedb_search", {"query": query, "mode": "text"})
            for id in ids:
                await call("read by id", "lancedb_read", {"id": id})
            for kind, arguments in FILTERS.items():
                for query in POSTGRES_QUERIES[:8]:
                    await call(kind, "lancedb_search", {"query": query, "mode": "text", **arguments})
            await call("status", "lancedb_status", {})
            await listed("resources")
        pid = common.spawned_since(before)
        served.rss, served.peak = common.resident_bytes(pid), common.resident_bytes(pid, "VmHWM")
    return served


def report(title: str, sizes: Sequence[dict[str, Any]], results: Sequence[Served], builds: bool) -> None:
    """One table: a column per size, a row per measure, and 1M ÷ 100k (the last size ÷ the one before)."""
    print(f"\n{title}\n")
    print(common.table_head(["", *(f"{size['passages']:,} passages" for size in sizes), "last ÷ the one before"]))

    def row(label: str, values: list[float], unit: str, digits: int = 1) -> None:
        ratio = f"{values[-1] / values[-2]:.2f}×" if len(values) > 1 and values[-2] else "–"
        print(common.table_row([label, *(f"{value:,.{digits}f} {unit}" for value in values), ratio]))

    if builds:
        row("index build (`lancelot-index`, start to exit)", [size["seconds"] for size in sizes], "s")
        row("index build: peak RSS, indexer + workers", [size["tree_mb"] for size in sizes], "MB", 0)
        row("database on disk", [size["megabytes"] for size in sizes], "MB", 0)
    for kind in KINDS:
        figures = [common.summary(served.times[kind]) for served in results]
        n = figures[0]["n"]
        row(f"{kind}: median (n {n})", [figure["median"] for figure in figures], "ms")
        if n > 1:
            row(f"{kind}: p95", [figure["p95"] for figure in figures], "ms")
    if all(served.text_requests for served in results):
        made = [sum(served.text_requests) / len(served.text_requests) for served in results]
        row("requests a warm text search (the S3 server's log)", made, "", 2)
    row("server RSS after the queries", [served.rss / 1e6 for served in results], "MB", 0)
    row("server RSS at its peak", [served.peak / 1e6 for served in results], "MB", 0)
    if len(results) > 1:
        text = [common.summary(served.times["text (BM25)"])["median"] for served in results[-2:]]
        rss = [served.rss for served in results[-2:]]
        for what, pair, target in (("text search median", text, TEXT_TARGET), ("server RSS", rss, RSS_TARGET)):
            ratio = pair[1] / pair[0]
            verdict = "met" if ratio <= target else "**not met**"
            print(f"\n{what}, last ÷ the one before: {ratio:.2f}× (target ≤ {target}×: {verdict})", end="")
        print()


def served_bucket(args: argparse.Namespace, dbs: list[Path], sizes: list[dict[str, Any]]) -> None:
    """Each table copied into a moto of its own (moto holds every object in its memory), served there at each
    LANCELOT_CACHE_MB of `args.cache_mb` in turn; a table per bound."""
    from tests.support.s3_server import S3Server

    bounds: list[str | None] = list(args.cache_mb) or [None]
    results: dict[str | None, list[Served]] = {bound: [] for bound in bounds}
    served = []
    for db, size in zip(dbs, sizes, strict=True):
        largest = max(path.stat().st_size for path in (db / "documents.lance" / "data").iterdir())
        if largest > MOTO_LARGEST:
            print(f"\n{db} not served from moto: a data file of {largest / 1e6:.0f} MB (see MOTO_LARGEST)")
            continue
        log = args.work / f"requests-{db.name}.log"
        log.unlink(missing_ok=True)
        with S3Server(log=log) as server:  # the requests of each timed search are counted from its log
            uri = server.database(db, f"growth/{db.name}")
            for bound in bounds:
                cache = {"LANCELOT_CACHE_MB": bound} if bound else {}
                env = {**server.env(), "LANCEDB_PATH": uri, **cache}
                results[bound].append(anyio.run(serve, env, args.rounds, log))
        served.append(size)
    for bound in bounds if served else []:
        cache = f"LANCELOT_CACHE_MB={bound}" if bound else "the server's defaults"
        title = f"From a bucket of moto's S3 server on 127.0.0.1 (the folder's files uploaded), {cache}."
        report(title, served, results[bound], False)


def beside(args: argparse.Namespace, dbs: list[Path], sizes: list[dict[str, Any]]) -> None:
    """The tables of `args.work` and those of `args.beside` (the same copies, built by other code), each from a
    folder, a fresh server for each table in turn, one round at a time: before and after in one run."""
    others = [args.beside / db.name for db in dbs]
    other_sizes = [json.loads((args.beside / f"build-{size['copies']}.json").read_text("utf-8")) for size in sizes]
    served: dict[Path, Served] = {}
    for _ in range(args.rounds):
        for db in [db for pair in zip(others, dbs, strict=True) for db in pair]:
            one = anyio.run(serve, {"LANCEDB_PATH": str(db)}, 1)
            kept = served.setdefault(db, Served())
            for kind, times in one.times.items():
                kept.times[kind] += times
            kept.rss, kept.peak = max(kept.rss, one.rss), max(kept.peak, one.peak)
    place = f"{platform.machine()}, {os.cpu_count()} cores, load average {common.load_average(3)}"
    print(f"\n### Growth: {args.beside} beside {args.work}, from a folder, round by round ({place})")
    report(f"{args.beside}:", other_sizes, [served[db] for db in others], True)
    report(f"{args.work}:", sizes, [served[db] for db in dbs], True)
    print(f"\n{args.work} ÷ {args.beside}, medians:\n")
    print(common.table_head(["", *(f"{size['passages']:,} passages" for size in sizes)]))
    for kind in KINDS:
        ratios = [
            common.summary(served[db].times[kind])["median"] / common.summary(served[other].times[kind])["median"]
            for db, other in zip(dbs, others, strict=True)
        ]
        print(common.table_row([kind, *(f"{ratio:.2f}×" for ratio in ratios)]))
    builds = [size["seconds"] / other["seconds"] for size, other in zip(sizes, other_sizes, strict=True)]
    print(common.table_row(["index build (separate runs, see their load)", *(f"{ratio:.2f}×" for ratio in builds)]))


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-growth", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=Path, help="the documents copied (default: the PostgreSQL 15 manual)")
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 11, 111], help="copies per table")
    parser.add_argument("--rounds", type=int, default=3, help="passes over every kind of query (default 3)")
    parser.add_argument("--bucket", action="store_true", help="also serve each table from moto's S3 server")
    parser.add_argument(
        "--cache-mb", nargs="+", default=[], help="LANCELOT_CACHE_MB of the servers on a bucket, one run each"
    )
    parser.add_argument("--rebuild", action="store_true", help="index the tables again")
    parser.add_argument("--beside", type=Path, help="tables as --work keeps them, served in turn with these")
    parser.add_argument("--build-only", action="store_true", help="build the tables, query nothing")
    parser.add_argument("--work", type=Path, default=WORK, help=f"where the tables are kept (default {WORK})")
    args = parser.parse_args()
    if args.docs is None:
        common.installed(common.POSTGRES_MANUAL)
        args.docs = common.POSTGRES_MANUAL
    args.work.mkdir(parents=True, exist_ok=True)
    sizes, dbs = [], []
    for count in sorted(args.copies):
        db, built = build(args.docs, count, args.work, args.rebuild)
        dbs.append(db)
        sizes.append(built)
        print(f"{count} copies: {built['passages']:,} passages, built in {built['seconds']:.1f} s", flush=True)
    if args.build_only:
        return
    if args.beside is not None:
        beside(args, dbs, sizes)
        return
    folder = [anyio.run(serve, {"LANCEDB_PATH": str(db)}, args.rounds) for db in dbs]
    place = f"{platform.machine()}, {os.cpu_count()} cores, load average {common.load_average(3)}"
    print(f"\n### Growth: {args.docs} copied, 10k to 1M passages ({place})")
    report("From a folder; each build a fresh database (its load average in `build-N.json`).", sizes, folder, True)
    if args.bucket:
        served_bucket(args, dbs, sizes)
    copies = " ".join(map(str, sorted(args.copies)))
    options = (" --bucket" if args.bucket else "") + (f" --cache-mb {' '.join(args.cache_mb)}" if args.cache_mb else "")
    print(f"\nCommand: `scripts/bench-growth --copies {copies} --rounds {args.rounds}{options}`")


if __name__ == "__main__":
    main()
