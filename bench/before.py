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
import os
import statistics
import time
from contextlib import AsyncExitStack
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench.search import QUERIES

ROOT = Path(__file__).resolve().parents[1]


async def measure(sides: dict[str, str], db: Path, table: str, rounds: int) -> dict[str, list[float]]:
    async with AsyncExitStack() as stack:
        sessions = {}
        for name, command in sides.items():
            env = {**os.environ, "LANCEDB_PATH": str(db), "LANCEDB_TABLE": table, "LANCELOT_LOG_LEVEL": "WARNING"}
            streams = await stack.enter_async_context(stdio_client(StdioServerParameters(command=command, env=env)))
            sessions[name] = await stack.enter_async_context(ClientSession(*streams))
            await sessions[name].initialize()
        for query in QUERIES:  # warm-up: indexes read, caches filled
            for session in sessions.values():
                await session.call_tool("lancedb_search", {"query": query, "mode": "text", "limit": 10})
        times: dict[str, list[float]] = {name: [] for name in sides}
        for round_number in range(rounds):
            order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
            for query in QUERIES:
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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default=str(ROOT / "bench-work/quality/baseline-888f04f"))
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--db", default=str(ROOT / "bench-work/search/db-100000"))
    parser.add_argument("--table", default="bench")
    args = parser.parse_args()
    baseline = Path(args.baseline)
    sides = {baseline.name: str(baseline / ".venv/bin/lancelot"), "current": str(ROOT / ".venv/bin/lancelot")}
    times = asyncio.run(measure(sides, Path(args.db), args.table, args.rounds))
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(" | ".join(f"{name} {median:.1f} ms" for name, median in medians.items()), end=" | ")
    print(f"current / {baseline.name} = {medians['current'] / medians[baseline.name]:.2f} (load {load})")


if __name__ == "__main__":
    main()
