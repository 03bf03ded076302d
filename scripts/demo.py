"""The README demo: index a folder with the real lancelot-index, search it through the real `lancelot`
server, spawned over stdio by the MCP SDK's client, and print the hits; then the line that gives the
same database to Claude Code.

    scripts/demo                            # the sample folder, examples/docs, asked three questions
    scripts/demo ~/notes                    # your folder instead
    scripts/demo ~/notes --ask "question"   # ... and ask it something (--ask again for more)
    scripts/demo --db DIR                   # the database goes to DIR (default: demo-db in this clone)
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from lancelot_server.init.flow import claude_code_line, server_command, server_env

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "examples" / "docs"
QUESTIONS = ["how often should I oil the chain", "when is the workshop open on Saturday", "vulcanis"]


def index(docs: Path, db: Path) -> None:
    shown = docs.relative_to(ROOT) if docs.is_relative_to(ROOT) else docs
    print(f"$ lancelot-index {shown} {db}")
    done = subprocess.run([str(BIN / "lancelot-index"), str(docs), str(db)], check=False)
    if done.returncode != 0:
        sys.exit(done.returncode)  # the indexer said why on stderr


def counted(number: int, thing: str) -> str:
    return f"{number} {thing}{'' if number == 1 else 's'}"


def served(status: dict[str, Any]) -> str:
    table, freshness = status["table"], status["table"].get("freshness") or {}
    documents, passages = counted(freshness["documents"], "document"), counted(freshness["passages"], "passage")
    return f"table {table['name']}: {documents}, {passages}, search: {', '.join(status['searchTypes'])}"


def show(reply: dict[str, Any]) -> None:
    search = reply["searchType"] + (f" ({reply['textMatch']})" if "textMatch" in reply else "")
    print(f"\n? {reply['query']}\n  {counted(reply['count'], 'hit')}, {search} search")
    if "note" in reply:
        print(f"  note: {reply['note']}")
    for number, hit in enumerate(reply["hits"], start=1):
        where = hit["source"] + (f" > {hit['heading']}" if hit["heading"] else "")
        print(f"  {number}. {hit['title']}  [{where}]  score {hit['score']}")
        excerpt = textwrap.shorten(hit["text"], width=220, placeholder=" …")
        print(textwrap.indent(textwrap.fill(excerpt, width=96), "     "))


async def search(db: Path, questions: list[str]) -> None:
    # The command and environment connect() prints. Only the database path goes to the server: no API
    # key, so `auto` searches text.
    command, *args = server_command()
    server = StdioServerParameters(command=command, args=[*args, "--log-level", "WARNING"], env=server_env(db))
    print(f"\n$ LANCEDB_PATH={db} lancelot   (spawned over stdio by the MCP client)")
    async with Client(server) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        print(f"tools: {', '.join(tools)}")
        status = await client.call_tool("lancedb_status", {})
        print(served(status.structured_content or {}))
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


def connect(db: Path) -> str:
    """What gives this database to Claude Code, and where the other clients' configurations come from."""
    init = BIN / "lancelot-init"
    return (
        "\nGive this database to Claude Code:\n\n"
        f"  {claude_code_line(server_env(db), server_command())}\n\n"
        f"For Claude Desktop, Cursor, VS Code and other clients, `{shlex.join([str(init), '--db', str(db)])}`\n"
        "prints their configuration. To install the commands apart from this development environment:\n"
        "scripts/install"
        f" (see {ROOT / 'docs' / 'install.md'})."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("docs", nargs="?", type=Path, help="a folder of documents to index instead of examples/docs")
    parser.add_argument("--ask", action="append", metavar="QUESTION", help="what to search for (repeatable)")
    parser.add_argument("--db", type=Path, default=ROOT / "demo-db", help="database folder to build and keep")
    options = parser.parse_args()
    if options.docs is not None and not options.docs.is_dir():
        parser.error(
            f"{options.docs} is not a folder. Give a folder of documents to index; questions go after --ask, "
            'e.g. scripts/demo ~/notes --ask "how do I ..."'
        )
    docs = SAMPLE if options.docs is None else options.docs.resolve()
    questions = options.ask or (QUESTIONS if options.docs is None else [])
    db = options.db.resolve()
    index(docs, db)
    anyio.run(search, db, questions)
    if not questions:
        print(f'\nAsk it something: scripts/demo {shlex.quote(str(docs))} --ask "your question"')
    print(connect(db))


if __name__ == "__main__":
    main()
