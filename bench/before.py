"""BM25 over stdio against the server of an earlier commit, side by side (issue 13's latency target).

    .venv/bin/python -m bench.before [--baseline DIR] [--rounds N] [--db DB] [--table NAME]

Two `lancelot` servers over stdio, each driven by the MCP SDK's client: this working tree's and the one
installed in DIR (default bench-work/quality/baseline-888f04f, main before issue 13, the worktree and venv
`scripts/bench-quality` makes), both serving the 100,000-passage `bench` table `scripts/bench-search` builds (or
`--db bench-work/search/peer-db --table documents`: the PostgreSQL manual `scripts/bench-search --peer` indexes).
After a warm-up pass, each round sends bench-search's 20 queries (text mode, `limit` 10) to both servers in
turn, the order swapped every round; it prints each side's median and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from contextlib import AsyncExitStack
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from bench import common
from bench.common import PYTHON_AND_POSTGRES_QUERIES
from bench.search_table import location


async def measure(sides: dict[str, Path], db: Path, table: str, rounds: int) -> dict[str, list[float]]:
    async with AsyncExitStack() as stack:
        sessions = {}
        for name, command in sides.items():
            server = common.stdio_server({"LANCEDB_PATH": str(db), "LANCEDB_TABLE": table}, command)
            streams = await stack.enter_async_context(stdio_client(server))
            sessions[name] = await stack.enter_async_context(ClientSession(*streams))
            await sessions[name].initialize()
        for query in PYTHON_AND_POSTGRES_QUERIES:  # warm-up: indexes read, caches filled
            for session in sessions.values():
                await session.call_tool("lancedb_search", {"query": query, "mode": "text", "limit": 10})
        times: dict[str, list[float]] = {name: [] for name in sides}
        for round_number in range(rounds):
            order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
            for query in PYTHON_AND_POSTGRES_QUERIES:
                for name in order:
                    started = time.perf_counter()
                    result = await sessions[name].call_tool(
                        "lancedb_search", {"query": query, "mode": "text", "limit": 10}
                    )
                    times[name].append(time.perf_counter() - started)
                    if result.is_error:
                        raise SystemExit(f"{name}: {result.content}")
        return times


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.before", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", default=str(common.WORK / "quality/baseline-888f04f"))
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--db", default=str(location(100_000)))
    parser.add_argument("--table", default="bench")
    args = parser.parse_args()
    baseline = Path(args.baseline)
    sides = {baseline.name: baseline / ".venv/bin/lancelot", "current": common.BIN / "lancelot"}
    times = asyncio.run(measure(sides, Path(args.db), args.table, args.rounds))
    medians = {name: common.median_ms(values) for name, values in times.items()}
    print(" | ".join(f"{name} {median:.1f} ms" for name, median in medians.items()), end=" | ")
    ratio = medians["current"] / medians[baseline.name]
    print(f"current / {baseline.name} = {ratio:.2f} (load {common.load_average(3)})")


if __name__ == "__main__":
    main()
