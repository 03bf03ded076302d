"""Several tables through the real `lancelot`: over stdio, LANCELOT_TABLES read from the environment, one
search over several tables merged by rank, the status of each, and a table not served refused as missing;
over HTTP on 127.0.0.1, a token limited to some tables, whose other tables answer as missing."""

from __future__ import annotations

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.e2e.stdio_server import call, serve
from tests.e2e.test_http_server import Running, environment
from tests.server import corpus

SCOPED, EVERY = "scoped-token-0123456789abcdef", "every-token-0123456789abcdef"


def test_several_tables_over_stdio(lancelot_db):
    async def session(client):
        tables = ["documents", "plain", "workspace"]
        merged = await call(client, "lancedb_search", {"query": "recall", "mode": "text", "table": tables})
        alone = [await call(client, "lancedb_search", {"query": "recall", "mode": "text", "table": t}) for t in tables]
        block = await call(client, "lancedb_query", {"query": "recall", "mode": "text", "table": tables})
        status = await call(client, "lancedb_status")
        refused = [
            await call(client, "lancedb_search", {"query": "recall", "table": name}) for name in ("embedded", "nope")
        ]
        listing = await client.list_resources()
        return merged, alone, block, status, refused, listing

    merged, alone, block, status, refused, listing = serve(lancelot_db, session, LANCELOT_TABLES="plain,workspace")

    reply = merged.structured_content
    assert not merged.is_error and "table" not in reply
    firsts = [result.structured_content["hits"][0] for result in alone]
    assert reply["hits"] == firsts  # one hit each: the first of each table, in the order asked
    assert [hit["table"] for hit in reply["hits"]] == ["documents", "plain", "workspace"]
    assert [(entry["table"], entry["textMatch"]) for entry in reply["tables"]] == [
        ("documents", "bm25"),
        ("plain", "substring"),
        ("workspace", "substring"),
    ]
    text = block.content[0].text
    assert text.startswith("# Search results from 3 tables") and "Table: `workspace`" in text

    described = status.structured_content
    assert described["database"]["tables"] == ["documents", "plain", "workspace", "embedded", "embedded_plain"]
    assert [(t["name"], t["fullTextIndex"]) for t in described["tables"]] == [
        ("documents", True),
        ("plain", False),
        ("workspace", False),
    ]

    embedded, nope = (result.content[0].text for result in refused)
    assert all(result.is_error for result in refused)
    served = "(served: 'documents', 'plain', 'workspace')"
    assert embedded.startswith(f"Table 'embedded' is in the database {lancelot_db} but not served {served}.")
    assert f", which holds 'documents', 'plain', 'workspace', 'embedded', 'embedded_plain' {served}." in nope

    tables = {resource.uri.split("/")[2] for resource in listing.resources}
    assert tables == {"documents", "plain", "workspace"}


def test_a_mistyped_table_over_stdio_names_the_tables_there_and_the_nearest(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "docs"), tmp_path / "db"
    corpus.index(docs, db, "--table", "tut")
    corpus.index(docs, db, "--table", "tutsrc")

    async def session(client):
        return await call(client, "lancedb_search", {"query": "chain"}), await call(client, "lancedb_status")

    search, status = serve(db, session, LANCEDB_TABLE="tutt")
    message = (
        f"Table 'tutt' is not in the database {db}, which holds 'tut', 'tutsrc' (served: none). Did you mean 'tut'? "
        "Set LANCEDB_TABLE to it, or add it to LANCELOT_TABLES."
    )
    assert search.is_error and search.content[0].text == message
    described = status.structured_content
    assert described["database"]["tables"] == ["tut", "tutsrc"]
    assert described["table"] == {"name": "tutt", "exists": False, "error": message, "searchTypes": []}


async def as_caller(url, token):
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        searched = await client.call_tool("lancedb_search", {"query": "recall", "table": ["documents", "plain"]})
        refused = [
            await client.call_tool("lancedb_search", {"query": "recall", "table": name})
            for name in ("workspace", "nope")
        ]
        status = await client.call_tool("lancedb_status", {})
        listing = await client.list_resources()
        return searched, refused, status.structured_content, {r.uri.split("/")[2] for r in listing.resources}


def test_a_token_limited_to_some_tables_over_http(tmp_path, lancelot_db):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"scoped {SCOPED} documents,plain\nevery {EVERY}\n")
    env = environment(lancelot_db, LANCELOT_AUTH_TOKENS_FILE=str(tokens), LANCELOT_TABLES="plain,workspace")
    with Running(tmp_path, env) as running:
        scoped = anyio.run(as_caller, running.url, SCOPED)
        every = anyio.run(as_caller, running.url, EVERY)

    searched, (workspace, nope), status, listed = scoped
    assert not searched.is_error and {hit["table"] for hit in searched.structured_content["hits"]} == {
        "documents",
        "plain",
    }
    assert workspace.is_error and nope.is_error
    assert workspace.content[0].text.replace("'workspace'", "'X'") == nope.content[0].text.replace("'nope'", "'X'")
    assert f"{lancelot_db}, which holds 'documents', 'plain'. Set" in nope.content[0].text
    assert status["database"]["tables"] == ["documents", "plain"] and "workspace" not in str(status)
    assert listed == {"documents", "plain"}

    _, (workspace, _), status, listed = every
    assert not workspace.is_error and workspace.structured_content["hits"][0]["table"] == "workspace"
    assert status["database"]["tables"] == ["documents", "plain", "workspace", "embedded", "embedded_plain"]
    assert listed == {"documents", "plain", "workspace"}
