"""What the benchmarks share: where things are, the corpora and their indexing, servers, processes, timing, tables.

Only the standard library is imported here at the top (Lance, the MCP SDK and the server where a function needs
them), so that every module of bench/ can use this one, the references' throwaway venvs too.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

    from lancelot_server.tools import Tools

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
WORK = ROOT / "bench-work"

# Debian's manuals: the corpora most benchmarks read (`installed` brings them).
POSTGRES_MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
PYTHON_MANUAL = Path("/usr/share/doc/python3.11/html")
# Every Debian package a benchmark reads, by a path it ships.
PACKAGES = {
    POSTGRES_MANUAL: "postgresql-doc-15",
    PYTHON_MANUAL: "python3.11-doc",
    Path("/usr/share/doc/texlive-doc/latex/base"): "texlive-latex-base-doc",
    Path("/usr/share/debian-reference/ch01.ja.html"): "debian-reference-ja",
    Path("/usr/share/debian-reference/ch01.zh-cn.html"): "debian-reference-zh-cn",
    Path("/usr/lib/python3/dist-packages/jieba/dict.txt"): "python3-jieba",
}

# Searches over both manuals, as bench-search's table holds them: BM25 matches each.
PYTHON_AND_POSTGRES_QUERIES = [
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
# Searches over the PostgreSQL manual alone (bench-http's table, bench-search --peer's).
POSTGRES_QUERIES = [
    "vacuum freeze",
    "transaction isolation level",
    "foreign key constraint",
    "replication slot",
    "json operators",
    "window function",
    "checkpoint tuning",
    "autovacuum threshold",
    "table partitioning",
    "btree index",
    "explain analyze",
    "role privileges",
    "sequence nextval",
    "timestamp with time zone",
    "listen notify",
    "full text search ranking",
]


# Corpora and indexing


def installed(*paths: Path) -> None:
    """The Debian packages that ship `paths` (keys of PACKAGES), installed with apt-get where missing."""
    missing = [PACKAGES[path] for path in paths if not path.exists()]
    if missing:
        print(f"installing {', '.join(missing)} with apt-get", file=sys.stderr)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], env=env, check=True)


def index(
    docs: Path | str,
    db: Path | str,
    *options: str,
    env: dict[str, str] | None = None,
    indexer: Path = BIN / "lancelot-index",
    timeout: float | None = None,
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """One `lancelot-index DOCS DB OPTIONS` run: seconds from start to exit, and what it printed. A failed run stops
    the benchmark with the indexer's own message."""
    started = time.perf_counter()
    command = [str(indexer), str(docs), str(db), *options]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {done.returncode}):\n{done.stderr}")
    return seconds, done


def rows(db: Path, table: str = "documents") -> int:
    """The rows of a table of `db`; 0 while it has none."""
    import lance

    path = db / f"{table}.lance"
    return int(lance.dataset(str(path)).count_rows()) if path.is_dir() else 0


def copies(
    sources: dict[str, Path], folder: Path, count: int, ignore: Callable[[str, list[str]], Iterable[str]] | None = None
) -> Path:
    """`folder/copy-00 …`: `count` copies of `sources`, each under its name (an empty name: the copy itself), made
    once and kept. Real copies, not hard links: the indexer reads a file reached by several paths once."""
    for number in range(count):
        copy = folder / f"copy-{number:02d}"
        if (copy / ".complete").exists():
            continue
        shutil.rmtree(copy, ignore_errors=True)
        for name, source in sources.items():
            shutil.copytree(source, copy / name, ignore=ignore)
        (copy / ".complete").write_text("", encoding="utf-8")
    return folder


def linked(pool: Path, folder: Path, count: int) -> Path:
    """`folder` holding the first `count` copies of `pool` (made by `copies`) as hard links: no disk, and distinct
    files for the walk, since each copy of the pool is a real one."""
    for number in range(count):
        copy = folder / f"copy-{number:02d}"
        if not copy.exists():
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-al", pool / copy.name, copy], check=True)
    return folder


def copies_for(
    passages: int,
    sources: dict[str, Path],
    folder: Path,
    ignore: Callable[[str, list[str]], Iterable[str]] | None = None,
) -> Path:
    """`folder` made afresh with as many copies of `sources` as hold at least `passages` passages once indexed:
    the first copy is indexed alone to count them."""
    shutil.rmtree(folder, ignore_errors=True)
    copies(sources, folder, 1, ignore)
    probe = folder.with_name(f"{folder.name}-probe-db")
    shutil.rmtree(probe, ignore_errors=True)
    index(folder, probe, "--quiet")
    per_copy = rows(probe)
    shutil.rmtree(probe)
    needed = -(-passages // per_copy)
    named = ", ".join(map(str, sources.values()))
    print(f"one copy of {named}: {per_copy:,} passages; making {needed} copies", file=sys.stderr)
    return copies(sources, folder, needed, ignore)


def throwaway_venv(folder: Path, requirements: Sequence[str], imports: str) -> Path:
    """The python of a venv of its own at `folder`, holding what a benchmark compares with (a reference library, a
    model), never in Lancelot's dependencies: made with pip on first use, kept while `import IMPORTS` works in it."""
    python = folder / "bin" / "python"
    probe = [str(python), "-c", f"import {imports}"]
    if python.exists() and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return python
    print(f"making the venv {folder} ({', '.join(requirements)})", file=sys.stderr)
    subprocess.run(["python3", "-m", "venv", str(folder)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements]
    subprocess.run(pip, check=True)
    return python


# Servers


def settings_free_env(**extra: str) -> dict[str, str]:
    """This process's environment without its Lancelot, LanceDB, OpenAI and embedding settings or PYTHONPATH (a
    server or an indexer a benchmark starts reads only the settings it is given), plus `extra`."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("LANCE", "OPENAI_", "EMBEDDING_")) and name != "PYTHONPATH"
    }
    return {**kept, **extra}


def stdio_server(env: dict[str, str], command: Path = BIN / "lancelot") -> StdioServerParameters:
    """`lancelot` (or `command`) at log level WARNING for the MCP SDK's stdio client, with the settings in `env` (the
    SDK adds only PATH, HOME and a few such of this process's variables) and no stored settings of the user's."""
    from mcp.client.stdio import StdioServerParameters

    env = {"XDG_CONFIG_HOME": str(WORK / "no-config"), **env}
    return StdioServerParameters(command=str(command), args=["--log-level", "WARNING"], env=env)


def in_process_tools(env: dict[str, str]) -> Tools:
    """The server's tools in this process, over the settings in `env` (LANCEDB_PATH and the others) alone."""
    from lancelot_schema.settings import resolve
    from lancelot_server.storage.store import Store
    from lancelot_server.tools import Tools

    settings = resolve(env)
    return Tools(Store(settings.db_path), settings)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 60) -> None:
    """Until `process` accepts connections on 127.0.0.1:`port`; the benchmark stops if it exits or takes longer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None:
                raise SystemExit(f"{process.args} exited ({process.returncode}) before listening on {port}") from None
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"{process.args} did not listen on {port} within {timeout:g} s")


@contextmanager
def http_server(
    db: Path, port: int, extra: dict[str, str] | None = None, log_level: str | None = "WARNING", **popen: Any
) -> Iterator[subprocess.Popen[bytes]]:
    """`lancelot --http PORT` over `db`, with the settings in `extra` only, listening; stopped by SIGTERM after.
    `popen`: Popen's own arguments (stderr, preexec_fn); its output goes nowhere unless `stderr` says where."""
    command = [str(BIN / "lancelot"), "--http", str(port), *(["--log-level", log_level] if log_level else [])]
    env = settings_free_env(LANCEDB_PATH=str(db), **(extra or {}))
    popen.setdefault("stderr", subprocess.DEVNULL)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, **popen)
    try:
        wait_for_port(port, process)
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


@contextmanager
def embedding_endpoint(
    command: list[str], env: dict[str, str] | None = None, stderr: int | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """An OpenAI-compatible embedding endpoint started by `command` from the repository root, which prints its port on
    its first line (tests.support.embedding_server, the quality model's server): its URL, without `/v1`."""
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.strip().isdigit():
            raise SystemExit(f"{' '.join(command)} did not start (exit {process.wait()})")
        yield f"http://127.0.0.1:{int(line)}", process
    finally:
        process.terminate()
        process.wait(timeout=30)


# Processes


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (those still running)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(child) for child in (task / "children").read_text(encoding="utf-8").split())
        except OSError:
            pass
    return found


def spawned_since(before: set[int]) -> int:
    """The process this one started since `before` (its `process_tree`) was taken: a server the MCP SDK's client
    started, which it does not name."""
    new = set(process_tree(os.getpid())) - before
    if not new:
        raise RuntimeError("no process started since")
    return min(new)


def resident_bytes(pid: int, field: str = "VmRSS") -> int:
    """A `field` of the process's memory in bytes: VmRSS, resident now; VmHWM, resident at its peak. 0 once gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def load_average(fields: int = 1) -> str:
    """The load average as the kernel gives it: over the last minute, or the first `fields` of 1, 5 and 15 minutes."""
    return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:fields])


# Timing


def timed(run: Callable[[], object]) -> float:
    """Seconds `run()` takes."""
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def alternated(rounds: int, runs: dict[str, Callable[[], Any]]) -> tuple[dict[str, list[Any]], str]:
    """Each run once a round, the order swapped every round (so that a change of load falls on all alike); their
    results, and the span of the load averages seen."""
    results: dict[str, list[Any]] = {name: [] for name in runs}
    loads = []
    for number in range(rounds):
        loads.append(load_average())
        for name in list(runs)[:: 1 if number % 2 == 0 else -1]:
            results[name].append(runs[name]())
    return results, f"{min(loads)}–{max(loads)}"


def median_ms(samples: Iterable[float]) -> float:
    return statistics.median(samples) * 1000


def percentile(samples: Sequence[float], share: float) -> float:
    """The sample at `share` (0.95 for p95) of the sorted samples, by nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(samples: Sequence[float]) -> dict[str, float]:
    """Median and p95 in ms, and the number of samples (seconds each)."""
    return {"median": median_ms(samples), "p95": percentile(samples, 0.95) * 1000, "n": len(samples)}


# Tables, in Markdown as docs/benchmarks.md quotes them


def table_row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def table_head(headers: Sequence[str]) -> str:
    return table_row(headers) + "\n" + "|---" * len(headers) + "|"
