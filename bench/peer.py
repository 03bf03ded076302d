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

from bench.http import QUERIES, SOURCE  # the PostgreSQL manual and its queries, as bench-http has them
from bench.qmd import Qmd, markdown_copy

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WARM_UP = 20


def load() -> str:
    return Path("/proc/loadavg").read_text(encoding="utf-8").split()[0]


class Peers:
    """The two servers over the same manual, each with its index and its way of being asked."""

    def __init__(self, work: Path) -> None:
        self.db = work / "peer-db"
        self.qmd = Qmd.install(ROOT / "bench-work", state=work / "peer-qmd")
        self.pages = markdown_copy(SOURCE, work / "peer-md")

    def lancelot(self, binaries: Path = BIN) -> StdioServerParameters:
        env = {"LANCEDB_PATH": str(self.db), "XDG_CONFIG_HOME": str(self.db.parent / "no-config")}
        return StdioServerParameters(command=str(binaries / "lancelot"), args=["--log-level", "WARNING"], env=env)

    def build_lancelot(self, fresh: bool) -> float:
        if fresh:
            shutil.rmtree(self.db, ignore_errors=True)
        started = time.perf_counter()
        subprocess.run([str(BIN / "lancelot-index"), str(SOURCE), str(self.db), "--quiet"], check=True)
        return time.perf_counter() - started

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
    uv = str(ROOT / ".tools" / "bin" / "uv")
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    # pylance is named until server/pyproject.toml lists it (the server reads through Lance).
    packages = [str(ROOT / "shared"), str(ROOT / "server"), "pylance==13.0.*"]
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
        await search(client, QUERIES[0])
        return initialized, listed, time.perf_counter() - started


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo.extend(children.get(found[-1], []))
    return found


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _spawned(before: set[int]) -> int:
    """The server this process started since `before` was listed (the SDK's client does not say)."""
    mine = {pid for pid in _tree(os.getpid()) if pid != os.getpid()}
    new = mine - before
    assert new, "no server process found"
    return min(new)


async def warm(peers: Peers, rounds: int) -> dict[str, dict[str, Any]]:
    """Both servers at once, each query sent to one then the other; latencies, then memory."""
    figures: dict[str, dict[str, Any]] = {}
    before = set(_tree(os.getpid()))
    async with Client(peers.lancelot()) as ours:
        ours_pid = _spawned(before)
        before = set(_tree(os.getpid()))
        async with Client(peers.qmd.server()) as theirs:
            theirs_pid = _spawned(before)
            pairs: list[tuple[str, Client, Call]] = [("lancelot", ours, lancelot_search), ("qmd", theirs, qmd_search)]
            for number in range(WARM_UP):
                for _, client, search in pairs:
                    await search(client, QUERIES[number % len(QUERIES)])
            times: dict[str, list[float]] = {"lancelot": [], "qmd": []}
            for number in range(rounds):
                order = pairs if number % 2 == 0 else pairs[::-1]
                for name, client, search in order:
                    started = time.perf_counter()
                    await search(client, QUERIES[number % len(QUERIES)])
                    times[name].append(time.perf_counter() - started)
            for name, pid in (("lancelot", ours_pid), ("qmd", theirs_pid)):
                processes = _tree(pid)
                figures[name] = {
                    "times": times[name],
                    "rss": sum(_rss_mb(one) for one in processes),
                    "largest": max(_rss_mb(one) for one in processes),
                    "processes": len(processes),
                }
    return figures


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def sdk_floor(peers: Peers, name: str) -> float:
    """Seconds to start a runtime and import its MCP SDK's server side, nothing else: what no start beats."""
    node_import = "await import('@modelcontextprotocol/server'); await import('@modelcontextprotocol/server/stdio')"
    command, folder = {
        "lancelot": ([sys.executable, "-c", "import mcp.server.mcpserver, mcp.server.stdio"], None),
        "qmd": ([str(peers.qmd.node), "--input-type=module", "-e", node_import], peers.qmd.home),
    }[name]
    started = time.perf_counter()
    subprocess.run(command, cwd=folder, check=True)
    return time.perf_counter() - started


Row = tuple[str, float, float, int, str]  # what, Lancelot, qmd, digits, load


def medians(what: str, samples: dict[str, list[float]], span: str, scale: float = 1.0, digits: int = 3) -> Row:
    ours, theirs = (statistics.median(samples[name]) * scale for name in ("lancelot", "qmd"))
    return what, ours, theirs, digits, span


def alternated(rounds: int, runs: dict[str, Callable[[], Any]]) -> tuple[dict[str, list[Any]], str]:
    """Each run once a round, the order swapped every round; the results, and the load averages seen."""
    results: dict[str, list[Any]] = {name: [] for name in runs}
    loads = []
    for number in range(rounds):
        loads.append(load())
        for name in list(runs)[:: 1 if number % 2 == 0 else -1]:
            results[name].append(runs[name]())
    return results, f"{min(loads)}–{max(loads)}"


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

    before = load()
    figures = anyio.run(warm, peers, warm_rounds)
    span = f"{before}–{load()}"
    times = {name: figures[name]["times"] for name in figures}
    rows.append(medians("warm search, median (ms)", times, span, 1000, 1))
    rows.append(("warm search, p95 (ms)", _p95(times["lancelot"]) * 1000, _p95(times["qmd"]) * 1000, 1, span))
    memory = f"memory after {WARM_UP + warm_rounds} searches, all the server's processes (MB)"
    rows.append((memory, figures["lancelot"]["rss"], figures["qmd"]["rss"], 0, span))
    rows.append(
        ("memory, the largest process alone (MB)", figures["lancelot"]["largest"], figures["qmd"]["largest"], 0, span)
    )

    print(
        f"\nLancelot beside {peers.qmd.version()} (BM25 only) on {SOURCE}; {os.cpu_count()} cores; "
        f"{build_rounds} builds, {cold_rounds} cold starts and {warm_rounds} warm searches each, alternating.\n"
    )
    print("| measure | Lancelot | qmd | Lancelot ÷ qmd | load |\n|---|---|---|---|---|")
    for what, mine, peer, digits, span in rows:
        print(f"| {what} | {mine:.{digits}f} | {peer:.{digits}f} | {mine / peer:.2f}× | {span} |")
