"""The README demo: index examples/docs with the real lancelot-index, then search it through the real
`lancelot` server, spawned over stdio by the MCP SDK's client, and print the hits.

    scripts/demo                 # a fresh temporary database, removed afterwards
    scripts/demo --db ./demo-db  # keep the database (point LANCEDB_PATH at it afterwards)
    scripts/demo "your question" "another one"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
QUESTIONS = ["how often should I oil the chain", "when is the workshop open on Saturday", "vulcanis"]


def index(db: Path) -> None:
    print(f"$ lancelot-index examples/docs {db}")
    subprocess.run([str(BIN / "lancelot-index"), str(ROOT / "examples" / "docs"), str(db)], check=True)


def show(reply: dict[str, Any]) -> None:
    search = reply["searchType"] + (f" ({reply['textMatch']})" if "textMatch" in reply else "")
    hits = "hit" if reply["count"] == 1 else "hits"
    print(f"\n? {reply['query']}\n  {reply['count']} {hits}, {search} search")
    if "note" in reply:
        print(f"  note: {reply['note']}")
    for number, hit in enumerate(reply["hits"], start=1):
        where = hit["source"] + (f" > {hit['heading']}" if hit["heading"] else "")
        print(f"  {number}. {hit['title']}  [{where}]  score {hit['score']}")
        excerpt = textwrap.shorten(hit["text"], width=220, placeholder=" …")
        print(textwrap.indent(textwrap.fill(excerpt, width=96), "     "))


async def search(db: Path, questions: list[str]) -> None:
    # Only the database path goes to the server: no API key, so `auto` searches text and says why.
    server = StdioServerParameters(
        command=str(BIN / "lancelot"), args=["--log-level", "WARNING"], env={"LANCEDB_PATH": str(db)}
    )
    print(f"\n$ LANCEDB_PATH={db} lancelot   (spawned over stdio by the MCP client)")
    async with Client(server) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        print(f"tools: {', '.join(tools)}")
        first_hit: dict[str, Any] | None = None
        for question in questions:
            result = await client.call_tool("lancedb_search", {"query": question, "limit": 3})
            if result.is_error:
                print(f"\n? {question}\n  error: {result.content[0].text}")
            else:
                show(result.structured_content or {})
                first_hit = first_hit or next(iter((result.structured_content or {}).get("hits", [])), None)
        if first_hit is not None and first_hit.get("id"):
            # What an assistant does next: read on around the best hit, within a budget.
            arguments = {"id": first_hit["id"], "before": 0, "after": 1, "budget": 1500}
            print(f"\n$ lancedb_read {json.dumps(arguments)}")
            reading = await client.call_tool("lancedb_read", arguments)
            print(textwrap.indent(reading.content[0].text.strip(), "  "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", nargs="*", help="what to search for (default: three sample questions)")
    parser.add_argument("--db", type=Path, help="database folder to (re)build and keep, e.g. ./demo-db")
    options = parser.parse_args()
    questions = options.questions or QUESTIONS
    if options.db is not None:
        db = options.db.resolve()
        index(db)
        anyio.run(search, db, questions)
        return
    with tempfile.TemporaryDirectory(prefix="lancelot-demo-") as folder:
        db = Path(folder) / "db"
        index(db)
        anyio.run(search, db, questions)


if __name__ == "__main__":
    main()
