"""Lancelot through the MCP Inspector and the TypeScript SDK it is built on: what such a client sees.

    .venv/bin/python scripts/interop.py NODE INSPECTOR_FOLDER

Indexes examples/docs into a throwaway database, then over stdio and over `lancelot --http` (legacy,
auto and modern protocol eras): the Inspector's CLI lists the tools with `--strict` (schema portability
problems fail it), and one session of the SDK's client (scripts/interop-client.cjs) lists the tools, calls
each, lists the document resources and their template and reads one, checking what comes back. Exits 1
naming every check that failed.
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
# Lancelot speaks the modern era, so a client that probes for it gets it.
NEGOTIATED = {"legacy": "legacy", "auto": "modern", "modern": "modern"}

Check = Callable[[dict[str, Any]], bool]


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# What each call must return; the sample folder has one page on chain care and 9 passages in all.
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


class Clients:
    """The Inspector's CLI and the SDK's client, both from the Inspector's install (scripts/node-tools)."""

    def __init__(self, node: str, folder: str, work: Path, db: Path) -> None:
        launcher = f"{folder}/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
        # A stdio server starts in a second or two, but scripts/test runs this beside the test suite at a low
        # priority: give it 120 s, not the Inspector's 15.
        self.cli = [node, launcher, "--cli", "--format", "json", "-q", "--connect-timeout", "120000"]
        self.session = [node, str(ROOT / "scripts" / "interop-client.cjs"), folder]
        # The Inspector keeps a catalog of servers; ours lives and dies with this run. The SDK's client hands
        # its environment to the stdio server it starts; the Inspector's is given the database with -e.
        self.env = {**os.environ, "MCP_CATALOG_PATH": str(work / "catalog.json"), "LANCEDB_PATH": str(db)}
        self.stdio_options = ["-e", f"LANCEDB_PATH={db}"]

    def run(self, command: list[str]) -> tuple[int, dict[str, Any] | None, str]:
        done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=self.env)
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            answer = None
        return done.returncode, answer, done.stderr.strip()[-500:]


def exercise(clients: Clients, target: list[str], label: str, era: str) -> list[str]:
    failures = []
    options = clients.stdio_options if target[0] == "--" else ["--protocol-era", era]
    status, answer, err = clients.run([*clients.cli, *options, "--method", "tools/list", "--strict", *target])
    names = [tool["name"] for tool in (answer or {}).get("result", {}).get("tools", [])]
    if status != 0 or names != TOOLS:
        failures.append(f"{label}: Inspector tools/list --strict exited {status} with {names}: {err}")
    calls = json.dumps([[tool, arguments] for tool, arguments, _ in CALLS])
    status, session, err = clients.run([*clients.session, era, calls, *target])
    if status != 0 or session is None:
        failures.append(f"{label}: the SDK client's session exited {status}: {err}")
        print(f"interop: {label}: FAILED")
        return failures
    if session.get("era") != NEGOTIATED[era]:
        failures.append(f"{label}: negotiated the {session.get('era')} era, not {NEGOTIATED[era]}")
    names = [tool.get("name") for tool in session["tools"].get("tools", [])]
    if names != TOOLS:
        failures.append(f"{label}: tools/list gave {names}: {session['tools'].get('error', '')}")
    for (tool, arguments, check), result in zip(CALLS, session["calls"], strict=True):
        try:
            passed = "error" not in result and not result.get("isError") and check(result)
        except (KeyError, IndexError, TypeError, ValueError):
            passed = False
        if not passed:
            failures.append(f"{label}: {tool} {arguments}: {str(result)[:300]}")
    failures += _resources(session, label)
    print(f"interop: {label}: {'ok' if not failures else 'FAILED'}")
    return failures


def _resources(session: dict[str, Any], label: str) -> list[str]:
    """The documents listed as resources, the template, and one document read by its URI."""
    failures = []
    names = [item.get("name") for item in session["resources"].get("resources", [])]
    if names != DOCUMENTS:
        failures.append(f"{label}: resources/list gave {names}: {session['resources'].get('error', '')}")
    templates = [item.get("uriTemplate") for item in session["templates"].get("resourceTemplates", [])]
    if templates != ["lancelot://{table}/{+source}"]:
        failures.append(f"{label}: resources/templates/list gave {templates}: {session['templates'].get('error', '')}")
    contents = session["read"].get("contents", [{}])
    if not str(contents[0].get("text", "")).startswith("# Fixing a puncture"):
        failures.append(f"{label}: resources/read lancelot://documents/guide/puncture.md: {str(session['read'])[:300]}")
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
    node, inspector = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="lancelot-interop-") as folder:
        work = Path(folder)
        db = work / "db"
        subprocess.run([BIN / "lancelot-index", "--quiet", ROOT / "examples" / "docs", db], check=True)
        clients = Clients(node, inspector, work, db)
        failures = exercise(clients, ["--", str(BIN / "lancelot"), "--log-level", "WARNING"], "stdio", "legacy")
        port = free_port()
        with (work / "http.log").open("wb") as log:
            server = subprocess.Popen([BIN / "lancelot", "--http", str(port)], env=clients.env, stderr=log)
            try:
                wait_for(port, server)
                for era in ERAS:
                    url = f"http://127.0.0.1:{port}/mcp"
                    failures += exercise(clients, [url], f"http ({era})", era)
            finally:
                server.terminate()
                server.wait(timeout=60)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        raise SystemExit(1)
    done = f"listed and called all {len(TOOLS)} tools and read the resources over stdio and HTTP"
    print(f"interop: the MCP Inspector and its TypeScript SDK client {done}")


if __name__ == "__main__":
    main()
