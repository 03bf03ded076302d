"""`initialize` + `tools/list` over stdio with the tables named in every tool, against the code before it.

    .venv/bin/python -m bench.described [--baseline REV] [--rounds N] [--tables N]

Two sides in the same run: this working tree's `lancelot`, whose `tools/list` names each served table with its
description and size (read from `NAME.lance/lancelot-about.json`, `lancelot_server/storage/described.py`), and
the one of REV (default 063b76a, main before descriptions), a worktree with its own venv under
bench-work/described (`bench/quality/baseline.py`). Both serve the same database: `--tables` copies of a small
folder of Markdown pages indexed by this tree's indexer, every table served (LANCELOT_TABLES="*").

Each round starts each side's server once (the order swapped every round) and times, with the MCP SDK's client,
`initialize` and the first `tools/list` (the start of a session: the one a person waits for), then 50 more
`tools/list` in that session. It prints each side's medians and their ratio (current / baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from bench import common
from bench.quality import baseline

WORK = common.WORK / "described"
LISTS = 50


def database(tables: int) -> Path:
    """`tables` tables of 40 short pages each, built once by this tree's indexer."""
    db = WORK / f"db-{tables}"
    if (db / f"t{tables - 1:02}.lance").is_dir():
        return db
    docs = WORK / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for number in range(40):
        body = "\n\n".join(f"Paragraph {p} of page {number}: gears, chains and sprockets." for p in range(6))
        (docs / f"page{number:02}.md").write_text(f"# Page {number}\n\n{body}\n", encoding="utf-8")
    for table in range(tables):
        common.index(docs, db, "--table", f"t{table:02}", "--description", f"Gear manual, part {table}")
    return db


async def one_session(command: Path, db: Path) -> tuple[float, list[float]]:
    """Seconds to `initialize` and list the tools once, then each of LISTS more `tools/list`."""
    env = {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "t00", "LANCELOT_TABLES": "*"}
    async with stdio_client(common.stdio_server(env, command)) as streams, ClientSession(*streams) as session:
        started = time.perf_counter()
        await session.initialize()
        listed = await session.list_tools()
        first = time.perf_counter() - started
        said = listed.tools[0].description or ""
        if command.parent == common.BIN and "Tables: t00 — Gear manual, part 0" not in said:
            raise SystemExit(f"this tree's server does not name its tables: {said!r}")
        more = []
        for _ in range(LISTS):
            started = time.perf_counter()
            await session.list_tools()
            more.append(time.perf_counter() - started)
        return first, more


async def measure(sides: dict[str, Path], db: Path, rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in sides}
    for round_number in range(rounds):
        order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
        for name in order:
            first, more = await one_session(sides[name], db)
            times[name][0].append(first)
            times[name][1].extend(more)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.described", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", default="063b76a")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--tables", type=int, default=8)
    args = parser.parse_args()
    before = baseline.prepare(args.baseline, WORK)
    db = database(args.tables)
    sides = {before.name: before.bin / "lancelot", "current": common.BIN / "lancelot"}
    times = asyncio.run(measure(sides, db, args.rounds))
    for column, label in ((0, "initialize + first tools/list"), (1, "each later tools/list")):
        medians = {name: common.median_ms(values[column]) for name, values in times.items()}
        shown = " | ".join(f"{name} {median:.2f} ms" for name, median in medians.items())
        ratio = medians["current"] / medians[before.name]
        print(f"{label}: {shown} | current / baseline = {ratio:.2f}")
    print(f"{args.tables} tables, {args.rounds} rounds, load {common.load_average(3)}")


if __name__ == "__main__":
    main()
