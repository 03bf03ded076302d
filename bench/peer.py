"""Lancelot beside qmd (its closest peer: an MCP server over a BM25 index of Markdown files) on the PostgreSQL
manual, in one run: `scripts/bench-search --peer`. Prints the side-by-side table for docs/benchmarks.md.

Both serve the same pages: Lancelot indexes the HTML manual (its own reading of HTML included), qmd the same
pages converted to Markdown beforehand (`bench.qmd.markdown_copy`; the conversion is not qmd's time). Every
figure alternates the two, round by round, so that the machine's other load falls on both alike, and each row
says the load average while it was measured:

* index build: a fresh `lancelot-index DOCS DB` against a fresh `qmd collection add`; no-op rebuild: the same
  command again against `qmd update`, nothing having changed;
* cold start: a fresh process each round, through the MCP SDK's stdio client: spawn → `initialize` answered,
  → `tools/list`, → the first search's result (Lancelot opens its table in the background as it starts);
  Lancelot from this repository's dev venv, and once more installed alone, as a user has it (`server_alone`);
* warm searches: one server each, 20 searches to warm up, then `--warm` searches sent to the two in turn
  (`lancedb_search` text mode, limit 10; qmd's `query` with one `lex` search, limit 10, no reranking);
* memory: the resident memory of each server's processes after those searches (qmd's launcher starts its
  server as a child process: both count, and the server alone is given too).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench import common, search_table
from bench.common import POSTGRES_QUERIES, alternated, load_average
from bench.qmd import Qmd, markdown_copy

SOURCE = common.POSTGRES_MANUAL
WARM_UP = 20


def database(work: Path = search_table.WORK) -> Path:
    """Lancelot's index of the manual (bench/call_costs.py and bench/warm_parts.py read it too)."""
    return work / "peer-db"


class Peers:
    """The two servers over the same manual, each with its index and its way of being asked."""

    def __init__(self, work: Path) -> None:
        self.db = database(work)
        self.qmd = Qmd.install(common.WORK, state=work / "peer-qmd")
        self.pages = markdown_copy(SOURCE, work / "peer-md")

    def lancelot(self, binaries: Path = common.BIN) -> StdioServerParameters:
        return common.stdio_server({"LANCEDB_PATH": str(self.db)}, binaries / "lancelot")

    def build_lancelot(self, fresh: bool) -> float:
        if fresh:
            shutil.rmtree(self.db, ignore_errors=True)
        return common.index(SOURCE, self.db, "--quiet")[0]

    def build_qmd(self, fresh: bool) -> float:
        if not fresh:
            return self.qmd.timed("update")
        shutil.rmtree(self.qmd.state, ignore_errors=True)
        return self.qmd.timed("collection", "add", str(self.pages.absolute()), "--name", "pg")

    def size(self) -> tuple[int, int]:
        """The bytes of Lancelot's database and of qmd's index (its SQLite file)."""
        ours = sum(path.stat().st_size for path in self.db.rglob("*") if path.is_file())
        theirs = sum(path.stat().st_size for path in (self.qmd.state / "cache").rglob("*.sqlite*"))
        return ours, theirs


def server_alone(work: Path) -> Path:
    """The bin folder of a venv holding the server as a user installs it (no test or lint tools beside it,
    which the dev venv's structlog would import): made afresh from the sources with uv, byte-compiled."""
    venv = work / "server-venv"
    shutil.rmtree(venv, ignore_errors=True)
    uv = str(common.ROOT / ".tools" / "bin" / "uv")
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    # pylance is named until server/pyproject.toml lists it (the server reads through Lance).
    packages = [str(common.ROOT / "shared"), str(common.ROOT / "server"), "pylance==13.0.*"]
    subprocess.run([uv, "pip", "install", "-q", "--compile-bytecode", "--python", str(venv), *packages], check=True)
    return venv / "bin"


Call = Callable[[Client, str], Any]


async def lancelot_search(client: Client, query: str) -> None:
    result = await client.call_tool("lancedb_search", {"query": query, "mode": "text", "limit": 10})
    assert not result.is_error and (result.structured_content or {}).get("hits"), result.content


async def qmd_search(client: Client, query: str) -> None:
    result = await client.call_tool("query", Qmd.lexical(query))
    assert not result.is_error and result.content, result.content


async def cold(server: StdioServerParameters, search: Call) -> tuple[float, float, float]:
    """Spawn → initialize answered, → tools/list answered, → first search answered (seconds)."""
    started = time.perf_counter()
    async with Client(server) as client:
        initialized = time.perf_counter() - started
        await client.list_tools()
        listed = time.perf_counter() - started
        await search(client, POSTGRES_QUERIES[0])
        return initialized, listed, time.perf_counter() - started


async def warm(peers: Peers, rounds: int) -> dict[str, dict[str, Any]]:
    """Both servers at once, each query sent to one then the other; latencies, then memory."""
    figures: dict[str, dict[str, Any]] = {}
    before = set(common.process_tree(os.getpid()))
    async with Client(peers.lancelot()) as ours:
        ours_pid = common.spawned_since(before)
        before = set(common.process_tree(os.getpid()))
        async with Client(peers.qmd.server()) as theirs:
            theirs_pid = common.spawned_since(before)
            pairs: list[tuple[str, Client, Call]] = [("lancelot", ours, lancelot_search), ("qmd", theirs, qmd_search)]
            for number in range(WARM_UP):
                for _, client, search in pairs:
                    await search(client, POSTGRES_QUERIES[number % len(POSTGRES_QUERIES)])
            times: dict[str, list[float]] = {"lancelot": [], "qmd": []}
            for number in range(rounds):
                order = pairs if number % 2 == 0 else pairs[::-1]
                for name, client, search in order:
                    started = time.perf_counter()
                    await search(client, POSTGRES_QUERIES[number % len(POSTGRES_QUERIES)])
                    times[name].append(time.perf_counter() - started)
            for name, pid in (("lancelot", ours_pid), ("qmd", theirs_pid)):
                processes = common.process_tree(pid)
                resident = [common.resident_bytes(one) / 2**20 for one in processes]
                figures[name] = {"times": times[name], "rss": sum(resident), "largest": max(resident)}
    return figures


def sdk_floor(peers: Peers, name: str) -> float:
    """Seconds to start a runtime and import its MCP SDK's server side, nothing else: what no start beats."""
    node_import = "await import('@modelcontextprotocol/server'); await import('@modelcontextprotocol/server/stdio')"
    command, folder = {
        "lancelot": ([sys.executable, "-c", "import mcp.server.mcpserver, mcp.server.stdio"], None),
        "qmd": ([str(peers.qmd.node), "--input-type=module", "-e", node_import], peers.qmd.home),
    }[name]
    return common.timed(lambda: subprocess.run(command, cwd=folder, check=True))


Row = tuple[str, float, float, int, str]  # what, Lancelot, qmd, digits, load


def medians(what: str, samples: dict[str, list[float]], span: str, scale: float = 1.0, digits: int = 3) -> Row:
    ours, theirs = (statistics.median(samples[name]) * scale for name in ("lancelot", "qmd"))
    return what, ours, theirs, digits, span


def run(work: Path, cold_rounds: int, build_rounds: int, warm_rounds: int) -> None:
    peers = Peers(work)
    rows: list[Row] = []

    builds, span = alternated(
        build_rounds, {"lancelot": lambda: peers.build_lancelot(True), "qmd": lambda: peers.build_qmd(True)}
    )
    rows.append(medians("index build: a fresh index of the manual (s)", builds, span))
    noops, span = alternated(
        build_rounds, {"lancelot": lambda: peers.build_lancelot(False), "qmd": lambda: peers.build_qmd(False)}
    )
    rows.append(medians("no-op rebuild: nothing changed (s)", noops, span))
    ours_size, theirs_size = peers.size()
    rows.append(("index size (MB)", ours_size / 1e6, theirs_size / 1e6, 1, "-"))

    starts, span = alternated(
        cold_rounds,
        {
            "lancelot": lambda: anyio.run(cold, peers.lancelot(), lancelot_search),
            "qmd": lambda: anyio.run(cold, peers.qmd.server(), qmd_search),
        },
    )
    labels = [
        "spawn → `initialize` answered (s)",
        "spawn → `tools/list` answered (s)",
        "spawn → first search result (s)",
    ]
    for index, label in enumerate(labels):
        rows.append(medians(label, {name: [one[index] for one in runs] for name, runs in starts.items()}, span))
    alone = server_alone(work)
    starts, span = alternated(
        cold_rounds,
        {
            "lancelot": lambda: anyio.run(cold, peers.lancelot(alone), lancelot_search),
            "qmd": lambda: anyio.run(cold, peers.qmd.server(), qmd_search),
        },
    )
    label = "spawn → first search result, Lancelot installed alone (s)"
    rows.append(medians(label, {name: [one[2] for one in runs] for name, runs in starts.items()}, span))
    floors, span = alternated(
        cold_rounds, {"lancelot": lambda: sdk_floor(peers, "lancelot"), "qmd": lambda: sdk_floor(peers, "qmd")}
    )
    rows.append(medians("reference: the runtime starting and importing its MCP SDK, nothing else (s)", floors, span))

    before = load_average()
    figures = anyio.run(warm, peers, warm_rounds)
    span = f"{before}–{load_average()}"
    times = {name: figures[name]["times"] for name in figures}
    rows.append(medians("warm search, median (ms)", times, span, 1000, 1))
    p95 = {name: common.percentile(times[name], 0.95) * 1000 for name in times}
    rows.append(("warm search, p95 (ms)", p95["lancelot"], p95["qmd"], 1, span))
    memory = f"memory after {WARM_UP + warm_rounds} searches, all the server's processes (MB)"
    rows.append((memory, figures["lancelot"]["rss"], figures["qmd"]["rss"], 0, span))
    rows.append(
        ("memory, the largest process alone (MB)", figures["lancelot"]["largest"], figures["qmd"]["largest"], 0, span)
    )

    print(
        f"\nLancelot beside {peers.qmd.version()} (BM25 only) on {SOURCE}; {os.cpu_count()} cores; "
        f"{build_rounds} builds, {cold_rounds} cold starts and {warm_rounds} warm searches each, alternating.\n"
    )
    print(common.table_head(["measure", "Lancelot", "qmd", "Lancelot ÷ qmd", "load"]))
    for what, mine, peer, digits, span in rows:
        print(common.table_row([what, f"{mine:.{digits}f}", f"{peer:.{digits}f}", f"{mine / peer:.2f}×", span]))
