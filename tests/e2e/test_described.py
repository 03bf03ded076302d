"""What the assistant is told about each table, through the real `lancelot` and the SDK's client: the tables'
descriptions and sizes in every tool's description and in the instructions, over stdio and HTTP; a table
without the record beside it still served; and over stdio, `notifications/tools/list_changed` once a table is
rebuilt with another description."""

from __future__ import annotations

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.e2e.stdio_server import call, parameters, serve
from tests.e2e.test_http_server import Running, environment
from tests.server import corpus

from lancelot_schema import about

GEARS = {"gears.md": "# Gears\n\nA gear meshes with a sprocket.\n", "chains.md": "# Chains\n\nA chain links.\n"}


def two_tables(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "gear-notes", GEARS), tmp_path / "db"
    corpus.index(docs, db, "--description", "Gear manual, edition 2")
    corpus.index(docs, db, "--table", "old")
    corpus.index(docs, db, "--table", "unserved", "--description", "Never named")
    (db / "old.lance" / about.ABOUT).unlink()  # as a table built before layout 6 has none
    return docs, db


def legacy(db, session, message_handler=None, **environ):
    """`session(client)` with a client of the handshake era, the one that `notifications/tools/list_changed` reaches
    (in the 2026 era it goes to `subscriptions/listen` streams, which Lancelot does not serve)."""

    async def run():
        with anyio.fail_after(120):
            client = Client(parameters(db, **environ), mode="legacy", message_handler=message_handler)
            async with client:
                return await session(client)

    return anyio.run(run)


async def instructions_of(client) -> str | None:
    return client.instructions


def descriptions(listed) -> dict[str, str]:
    return {tool.name: tool.description or "" for tool in listed.tools}


def test_every_tool_and_the_instructions_name_the_served_tables_over_stdio(tmp_path):
    _, db = two_tables(tmp_path)

    async def session(client):
        before = await client.list_tools()
        status = await call(client, "lancedb_status")  # opens both tables: the old one is then named by its stamp
        after = await client.list_tools()
        return client.instructions, client.server_capabilities, before, status, after

    instructions, capabilities, before, status, after = legacy(db, session, LANCELOT_TABLES="old,missing")
    modern = serve(db, instructions_of, LANCELOT_TABLES="old")
    line = "Tables: documents — Gear manual, edition 2, 2 documents; old."
    assert instructions is not None and instructions.endswith(line)
    assert modern is not None and modern.endswith(line)  # the 2026 era's server/discover says the same
    assert capabilities.tools is not None and capabilities.tools.list_changed is True
    for name, text in descriptions(before).items():
        second = text.split("\n")[1]
        assert second == line, name  # after the tool's first line: what a client that cuts descriptions keeps
        assert "unserved" not in text and "missing" not in text and "Never named" not in text
    opened = "Tables: documents — Gear manual, edition 2, 2 documents; old — gear-notes, 2 passages."
    assert all(text.split("\n")[1] == opened for text in descriptions(after).values())
    by_name = {table["name"]: table for table in status.structured_content["tables"]}
    assert by_name["documents"]["description"] == "Gear manual, edition 2"
    assert by_name["old"]["description"] == "gear-notes"


def test_a_rebuild_with_another_description_is_announced_over_stdio(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "docs", GEARS), tmp_path / "db"
    corpus.index(docs, db, "--description", "Gear manual")
    changed = anyio.Event()

    async def heard(message) -> None:
        if getattr(getattr(message, "root", message), "method", "") == "notifications/tools/list_changed":
            changed.set()

    async def session(client):
        first = await client.list_tools()
        await anyio.to_thread.run_sync(lambda: corpus.index_command(docs, db, "--description", "Sprocket manual"))
        with anyio.fail_after(30):
            await changed.wait()
        return first, await client.list_tools()

    first, second = legacy(db, session, heard)
    assert all("Tables: documents — Gear manual, 2 documents." in text for text in descriptions(first).values())
    assert all("Tables: documents — Sprocket manual, 2 documents." in text for text in descriptions(second).values())


async def over_http(url, docs, db):
    http = httpx2.AsyncClient(timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        first = await client.list_tools()
        await anyio.to_thread.run_sync(lambda: corpus.index_command(docs, db, "--description", "Sprocket manual"))
        return client.instructions, client.server_capabilities, first, await client.list_tools()


def test_every_tool_and_the_instructions_name_the_served_tables_over_http(tmp_path):
    docs, db = two_tables(tmp_path)
    with Running(tmp_path, environment(db, LANCELOT_TABLES="old")) as running:
        instructions, capabilities, first, second = anyio.run(over_http, running.url, docs, db)
    assert instructions is not None and instructions.endswith(
        "Tables: documents — Gear manual, edition 2, 2 documents; old."
    )
    # A stateless endpoint cannot push: it does not say it would, and its next tools/list shows the new text.
    assert capabilities.tools is not None and not capabilities.tools.list_changed
    assert all(
        text.split("\n")[1].startswith("Tables: documents — Gear manual, edition 2, 2 documents; old")
        for text in descriptions(first).values()
    )
    assert all(
        text.split("\n")[1].startswith("Tables: documents — Sprocket manual, 2 documents; old")
        for text in descriptions(second).values()
    )
