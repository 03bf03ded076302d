"""The server cannot change a database: no write call in its source, and no byte changed by using it.

The import contract (pyproject: "The server never imports the indexer") keeps the only writer out of it.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from tests.e2e.stdio_server import call, serve
from tests.server import corpus

import lancelot_server

SERVER = Path(lancelot_server.__file__).parent

# LanceDB's and Lance's calls that change a database, table or index (the server reads through Lance itself:
# `lance_table.py`), Lance's file session's writes, and file-system creation.
WRITES = {
    "create_table", "create_empty_table", "create_index", "create_fts_index", "create_scalar_index",
    "add", "delete", "update", "merge_insert", "add_columns", "alter_columns", "drop_columns",
    "optimize", "compact_files", "cleanup_old_versions", "drop_table", "drop_all_tables", "drop_database",
    "drop_index", "rename_table", "restore", "create_tag", "delete_tag", "write_dataset",
    "commit", "commit_batch", "insert", "merge", "truncate_table", "update_schema_metadata",
    "update_field_metadata", "update_metadata", "replace_schema_metadata", "replace_field_metadata",
    "create_branch", "delete_branch", "add_bases", "open_writer", "upload_file", "delete_file",
    "mkdir", "makedirs",
}  # fmt: skip
# Pure functions that share a name with a write: pyarrow.compute's `add` (imported as `pc`) and a
# plain set's `add` on a local set named here.
PURE_RECEIVERS = {"pc", "seen"}
# lancelot-init writes its own settings (never the database) under the per-user config directory.
SETTINGS_WRITERS = {"config_store.py"}


def write_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES:
            receiver = node.func.value
            if isinstance(receiver, ast.Name) and receiver.id in PURE_RECEIVERS:
                continue
            if path.name in SETTINGS_WRITERS and node.func.attr == "mkdir":
                continue
            found.append(f"{path.name}:{node.lineno} .{node.func.attr}(")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRITES:
            found.append(f"{path.name}:{node.lineno} {node.func.id}(")
    return found


def test_the_server_source_makes_no_write_call():
    sources = sorted(SERVER.rglob("*.py"))
    assert len(sources) >= 40  # every subpackage too
    assert [call for path in sources for call in write_calls(path)] == []


def test_the_scan_finds_write_calls(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "db.create_table('t', rows)\ntable.add(rows)\ntable.delete(\"id = 1\")\ntable.update(where='x')\n"
        "table.merge_insert('id')\ntable.create_fts_index('text')\ntable.optimize()\n"
        "ds.cleanup_old_versions()\ndb.drop_table('t')\nPath(p).mkdir()\nos.makedirs(p)\npc.add(a, b)\n"
        "lance.write_dataset(rows, uri)\nLanceDataset.commit(uri, op)\nds.update_schema_metadata({})\n"
        "session.open_writer('f')\nsession.delete_file('f')\n",
        encoding="utf-8",
    )
    assert [entry.split()[1] for entry in write_calls(sample)] == [
        ".create_table(", ".add(", ".delete(", ".update(", ".merge_insert(", ".create_fts_index(",
        ".optimize(", ".cleanup_old_versions(", ".drop_table(", ".mkdir(", ".makedirs(", ".write_dataset(",
        ".commit(", ".update_schema_metadata(", ".open_writer(", ".delete_file(",
    ]  # fmt: skip


# Reads by id and by source, in range and not, and hostile ones: each runs against every table.
READS = [
    {"id": "guide/puncture.md#1"},
    {"id": "00000000-0000-0000-0000-000000000002"},
    {"source": "guide/puncture.md", "from": 1, "budget": 500},
    {"source": "localfiles/chain.md"},
    {"source": "../../etc/passwd"},
    {"id": "x' OR 1=1 --#0"},
    {"source": "%"},
]


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file and folder under `folder`, with its content hash (folders: "dir")."""
    prints = {}
    for root, folders, files in os.walk(folder):
        for name in folders:
            prints[os.path.relpath(os.path.join(root, name), folder)] = "dir"
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                prints[os.path.relpath(path, folder)] = hashlib.sha256(handle.read()).hexdigest()
    return prints


async def every_tool(client: Client) -> list[Any]:
    """Every tool in every mode on every table (and pairs of them), every read and every resource; the tools
    listed before and after, which reads the record beside each table, then the stamps of the tables open."""
    named = await client.list_tools()
    assert all("Tables: documents" in (tool.description or "") for tool in named.tools)
    results = [await call(client, "lancedb_status"), await call(client, "lancedb_version")]
    for table in ("documents", "plain", "workspace", "embedded", "missing", ["embedded", "workspace"]):
        for mode in ("auto", "text", "vector", "hybrid"):
            for tool in ("lancedb_search", "lancedb_query"):
                arguments = {"query": "chain 'oil' %_\\", "mode": mode, "table": table}
                results.append(await call(client, tool, arguments))
                results.append(await call(client, tool, {**arguments, "path": "guide/"}))
                several = {"queries": ["chain 'oil' %_\\", "escaping air", "the of and"], "mode": mode, "table": table}
                results.append(await call(client, tool, several))
        for arguments in READS if isinstance(table, str) else ():
            results.append(await call(client, "lancedb_read", {**arguments, "table": table}))
    listing = await client.list_resources()
    for resource in listing.resources:
        await client.read_resource(resource.uri)
    for uri in ("lancelot://documents/../x", "lancelot://workspace/localfiles/chain.md", "lancelot://nope/a"):
        with contextlib.suppress(MCPError):
            await client.read_resource(uri)
    named = await client.list_tools()
    assert all("; workspace" in (tool.description or "") for tool in named.tools)
    return results


@pytest.mark.slow
def test_no_database_file_changes_while_every_tool_and_resource_runs_in_every_mode(tmp_path, embedding_server):
    from tests.support.fake_vectors import hashed_vector

    docs, db = corpus.write_docs(tmp_path / "docs"), tmp_path / "db"
    corpus.index(docs, db)
    corpus.index(docs, db, "--table", "plain", "--no-fts")
    corpus.anythingllm_table(db)
    corpus.add_vectors(db, "documents", "embedded", lambda text: hashed_vector(text, 8), 8)
    before = fingerprint(db)
    assert len(before) > 20

    results = serve(
        db,
        every_tool,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=embedding_server.url,
        EMBEDDING_MODEL="test-8",
        LANCELOT_TABLES="*",  # every table served: every tool runs on each
    )
    ran_everything(results)
    assert fingerprint(db) == before


def ran_everything(results: list[Any]) -> None:
    search_types = {r.structured_content.get("searchType") for r in results if r.structured_content}
    assert {"vector", "hybrid"} <= search_types, "vector and hybrid search ran against the embedded table"
    fused = {
        r.structured_content["searchType"]
        for r in results
        if r.structured_content and "queries" in r.structured_content
    }
    assert {"text", "vector", "hybrid"} <= fused, "several phrasings ran in every search type"
    assert sum(1 for r in results if r.structured_content and "passages" in r.structured_content) >= 8, "reads ran"
