"""Lancelot through the MCP Inspector's CLI: what a client built on the TypeScript SDK sees.

    .venv/bin/python scripts/interop.py NODE INSPECTOR_LAUNCHER

Indexes examples/docs into a throwaway database, then over stdio and over `lancelot --http` (legacy,
auto and modern protocol eras): lists the tools with `--strict` (schema portability problems fail it),
calls each tool, lists the document resources and their template and reads one, checking what comes
back. Exits 1 naming every check that failed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TOOLS = ["lancedb_search", "lancedb_query", "lancedb_read", "lancedb_status", "lancedb_version"]
DOCUMENTS = ["README.md", "guide/chain-care.txt", "guide/puncture.md", "hours.html"]
ERAS = ["legacy", "auto", "modern"]

Check = Callable[[dict[str, Any]], bool]


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# What each call must return; the sample folder has one page on chain care and 9 chunks in all.
CALLS: list[tuple[str, dict[str, Any], Check]] = [
    (
        "lancedb_search",
        {"query": "chain", "limit": 1},
        lambda r: json.loads(_text(r))["hits"][0]["id"] == "guide/chain-care.txt#0",
    ),
    ("lancedb_query", {"query": "opening hours", "limit": 2}, lambda r: "Opening hours" in _text(r)),
    (
        "lancedb_read",
        {"id": "guide/puncture.md#3", "before": 1, "after": 0},
        lambda r: [p["number"] for p in r["structuredContent"]["passages"]] == [2, 3] and "## Passage 3" in _text(r),
    ),
    ("lancedb_status", {}, lambda r: json.loads(_text(r))["table"]["rows"] == 9),
    ("lancedb_version", {}, lambda r: "lancelot" in json.loads(_text(r))),
]


class Inspector:
    def __init__(self, node: str, launcher: str, work: Path) -> None:
        # A stdio server starts in a second or two, but scripts/test runs this beside the test suite at a low
        # priority: give it 120 s, not the Inspector's 15.
        self.command = [node, launcher, "--cli", "--format", "json", "-q", "--connect-timeout", "120000"]
        # The Inspector keeps a catalog of servers; ours lives and dies with this run.
        self.env = {**os.environ, "MCP_CATALOG_PATH": str(work / "catalog.json")}

    def run(self, target: list[str], *arguments: str) -> tuple[int, dict[str, Any] | None, str]:
        done = subprocess.run(
            [*self.command, *arguments, *target], capture_output=True, text=True, timeout=120, env=self.env
        )
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            answer = None
        return done.returncode, answer, done.stderr.strip()[-500:]


def exercise(inspector: Inspector, target: list[str], label: str, *era: str) -> list[str]:
    failures = []
    status, answer, err = inspector.run(target, *era, "--method", "tools/list", "--strict")
    names = [tool["name"] for tool in (answer or {}).get("result", {}).get("tools", [])]
    if status != 0 or names != TOOLS:
        failures.append(f"{label}: tools/list --strict exited {status} with {names}: {err}")
    for tool, arguments, check in CALLS:
        status, answer, err = inspector.run(
            target, *era, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(arguments)
        )
        result = (answer or {}).get("result")
        try:
            passed = status == 0 and result is not None and not result.get("isError") and check(result)
        except (KeyError, IndexError, TypeError, ValueError):
            passed = False
        if not passed:
            failures.append(f"{label}: {tool} {arguments} exited {status}: {str(answer)[:300]} {err}")
    failures += _resources(inspector, target, label, *era)
    print(f"interop: {label}: {'ok' if not failures else 'FAILED'}")
    return failures


def _resources(inspector: Inspector, target: list[str], label: str, *era: str) -> list[str]:
    """The documents listed as resources, the template, and one document read by its URI."""
    failures = []
    status, answer, err = inspector.run(target, *era, "--method", "resources/list")
    names = [item.get("name") for item in (answer or {}).get("result", {}).get("resources", [])]
    if status != 0 or names != DOCUMENTS:
        failures.append(f"{label}: resources/list exited {status} with {names}: {err}")
    status, answer, err = inspector.run(target, *era, "--method", "resources/templates/list")
    templates = [item.get("uriTemplate") for item in (answer or {}).get("result", {}).get("resourceTemplates", [])]
    if status != 0 or templates != ["lancelot://{table}/{+source}"]:
        failures.append(f"{label}: resources/templates/list exited {status} with {templates}: {err}")
    uri = "lancelot://documents/guide/puncture.md"
    status, answer, err = inspector.run(target, *era, "--method", "resources/read", "--uri", uri)
    contents = (answer or {}).get("result", {}).get("contents", [{}])
    if status != 0 or not str(contents[0].get("text", "")).startswith("# Fixing a puncture"):
        failures.append(f"{label}: resources/read {uri} exited {status}: {str(answer)[:300]} {err}")
    return failures


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"lancelot --http exited with {server.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("lancelot --http never listened")


def main() -> None:
    node, launcher = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="lancelot-interop-") as folder:
        work = Path(folder)
        db = work / "db"
        subprocess.run([BIN / "lancelot-index", "--quiet", ROOT / "examples" / "docs", db], check=True)
        inspector = Inspector(node, launcher, work)
        stdio = ["-e", f"LANCEDB_PATH={db}", "--", str(BIN / "lancelot"), "--log-level", "WARNING"]
        failures = exercise(inspector, stdio, "stdio")
        port = free_port()
        env = {**os.environ, "LANCEDB_PATH": str(db)}
        with (work / "http.log").open("wb") as log:
            server = subprocess.Popen([BIN / "lancelot", "--http", str(port)], env=env, stderr=log)
            try:
                wait_for(port, server)
                for era in ERAS:
                    url = f"http://127.0.0.1:{port}/mcp"
                    failures += exercise(inspector, [url], f"http ({era})", "--protocol-era", era)
            finally:
                server.terminate()
                server.wait(timeout=60)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        raise SystemExit(1)
    done = f"listed and called all {len(TOOLS)} tools and read the resources over stdio and HTTP"
    print(f"interop: the MCP Inspector CLI {done}")


if __name__ == "__main__":
    main()
