"""The real `lancelot` over real stdio pipes, driven by the MCP SDK's client."""

from __future__ import annotations

import json
import os
import subprocess
import threading

import jsonschema
import lance
import pytest
from tests.e2e.stdio_server import LANCELOT, call, searches_during_rebuilds, serve, serve_logged
from tests.server import corpus

from lancelot_schema import layout

# The tests that only query `lancelot_db` with no setting share one stdio server (`servers`), on one worker.
SHARED = pytest.mark.xdist_group("stdio_lancelot_db")


def embedded(endpoint):
    """The settings that search the `embedded` table with the test endpoint's `test-8` vectors."""
    return {
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": endpoint.url,
        "EMBEDDING_MODEL": "test-8",
        "LANCEDB_TABLE": "embedded",
    }


@SHARED
def test_all_four_tools_answer_over_stdio(lancelot_db, servers):
    async def session(client):
        names = [tool.name for tool in (await client.list_tools()).tools]
        search = await call(client, "lancedb_search", {"query": "escaping air", "mode": "text"})
        query = await call(client, "lancedb_query", {"query": "escaping air", "mode": "text"})
        status = await call(client, "lancedb_status")
        version = await call(client, "lancedb_version")
        return names, search, query, status, version

    names, search, query, status, version = servers.over("stdio", lancelot_db, session)
    assert names == ["lancedb_search", "lancedb_query", "lancedb_read", "lancedb_status", "lancedb_version"]
    assert search.structured_content["hits"][0]["source"] == "guide/puncture.md"
    assert search.structured_content["textMatch"] == "bm25"
    assert "## 1. Fixing a puncture" in query.content[0].text and "Source: guide/puncture.md" in query.content[0].text
    assert status.structured_content["table"]["fullTextIndex"] is True
    assert "2025-11-25" in version.structured_content["protocolVersions"]


def test_every_mode_and_fallback_over_stdio(lancelot_db, closed_url):
    async def session(client):
        replies = {}
        for mode in ("auto", "text", "vector", "hybrid"):
            replies[mode] = (await call(client, "lancedb_search", {"query": "chain", "mode": mode})).structured_content
        return replies

    # A key, but an endpoint where nothing listens: vector search fails and says why.
    replies = serve(
        lancelot_db,
        session,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=closed_url,
        EMBEDDING_MODEL="test-8",
        LANCEDB_TABLE="embedded",
    )
    for mode in ("auto", "vector", "hybrid"):
        assert replies[mode]["searchType"] == "text" and replies[mode]["hits"]
        assert "cannot reach 127.0.0.1:" in replies[mode]["note"]
    # The first failure is tried; the searches after it rest instead of waiting on the endpoint again.
    assert replies["auto"]["note"].startswith("vector search failed: cannot reach")
    assert replies["vector"]["note"].startswith("vector search skipped: it failed ")
    assert replies["hybrid"]["note"].startswith("vector search skipped: it failed ")
    assert "note" not in replies["text"] and replies["text"]["textMatch"] == "bm25"


def test_vector_and_hybrid_search_over_stdio(lancelot_db, embedding_server):
    async def session(client):
        replies = {}
        for mode in ("vector", "hybrid", "auto"):
            arguments = {"query": "press the patch firmly", "mode": mode}
            replies[mode] = (await call(client, "lancedb_search", arguments)).structured_content
        replies["text"] = (await call(client, "lancedb_search", {"query": "patch", "mode": "text"})).structured_content
        replies["status"] = (await call(client, "lancedb_status")).structured_content
        return replies

    replies = serve(lancelot_db, session, **embedded(embedding_server))
    assert replies["vector"]["searchType"] == "vector" and replies["vector"]["hits"][0]["source"] == "guide/puncture.md"
    for mode in ("hybrid", "auto"):
        reply = replies[mode]
        assert (reply["searchType"], reply["textMatch"]) == ("hybrid", "bm25") and "note" not in reply
        assert reply["hits"][0]["source"] == "guide/puncture.md"
    assert replies["status"]["searchTypes"] == ["text", "vector", "hybrid"]
    assert replies["status"]["embedding"]["endpoint"] == f"127.0.0.1:{embedding_server.port}"
    # Three vector or hybrid searches, three requests; the text search and the status sent nothing.
    assert [r.inputs for r in embedding_server.requests] == [("press the patch firmly",)] * 3


def test_several_phrasings_in_one_call_over_stdio(lancelot_db, embedding_server):
    phrasings = ["escaping air", "chain degreaser"]

    async def session(client):
        schema = next(tool for tool in (await client.list_tools()).tools if tool.name == "lancedb_search").output_schema
        search = await call(client, "lancedb_search", {"queries": phrasings, "mode": "hybrid"})
        query = await call(client, "lancedb_query", {"queries": phrasings, "mode": "text"})
        refused = await call(client, "lancedb_search", {"query": "chain", "queries": phrasings})
        return schema, search, query, refused

    schema, search, query, refused = serve(lancelot_db, session, **embedded(embedding_server))
    reply = search.structured_content
    jsonschema.validate(reply, schema)
    assert (reply["queries"], reply["searchType"]) == (phrasings, "hybrid") and "query" not in reply
    found = {hit["source"]: hit["queries"] for hit in reply["hits"]}
    assert found["guide/puncture.md"][0] == 0 and 1 in found["guide/chain.md"]
    # Both phrasings in one embedding request, however many lists they make.
    assert [request.inputs for request in embedding_server.requests] == [tuple(phrasings)]
    text = query.content[0].text
    assert "- queries: [0] escaping air; [1] chain degreaser" in text and "Found by queries: 1" in text
    assert refused.is_error and "not both" in refused.content[0].text


def test_an_anythingllm_table_over_stdio(lancelot_db):
    async def session(client):
        search = await call(client, "lancedb_search", {"query": "recall", "table": "workspace"})
        query = await call(client, "lancedb_query", {"query": "recall", "table": "workspace"})
        return search.structured_content, query.content[0].text

    search, query = serve(lancelot_db, session, LANCELOT_TABLES="workspace")
    (hit,) = search["hits"]
    assert (search["searchType"], search["textMatch"]) == ("text", "substring")
    assert "no API key" in search["note"]
    assert hit["text"] == "Ticket DEC-0054 records the recall of faulty chain links."
    assert hit["source"] == "localfiles/chain.md" and hit["metadata"]["sourceDocument"] == "chain.md"
    assert "<document_metadata>" not in query and "Source: localfiles/chain.md" in query


@SHARED
def test_the_budget_leaves_out_whole_passages_and_says_how_many(lancelot_db, servers):
    async def session(client):
        arguments = {"query": "chain patch workshop members air", "mode": "text", "limit": 10, "perDocument": 10}
        small = await call(client, "lancedb_query", {**arguments, "budget": 800})
        large = await call(client, "lancedb_query", {**arguments, "budget": 100_000})
        return small.content[0].text, large.content[0].text

    small, large = servers.over("stdio", lancelot_db, session)
    assert len(small) <= 800 and "more passages left out to stay within the 800-character budget" in small
    assert "left out" not in large
    sections = large.count("\n## ")
    shown = small.count("\n## ")
    left_out = int(small.rsplit("_", 2)[-2].split()[0])
    assert shown + left_out == sections


def test_errors_are_tool_results_and_the_server_keeps_serving(tmp_path):
    async def session(client):
        missing = await call(client, "lancedb_search", {"query": "chain"})
        too_many = await call(client, "lancedb_search", {"query": "chain", "limit": 500})
        status = await call(client, "lancedb_status")
        return missing, too_many, status

    missing, too_many, status = serve(tmp_path / "no-db", session)
    assert missing.is_error and "does not exist" in missing.content[0].text
    assert too_many.is_error and "limit" in too_many.content[0].text
    assert not status.is_error and status.structured_content["database"]["exists"] is False
    assert not (tmp_path / "no-db").exists()


def test_status_gives_the_exclude_patterns_as_a_list_and_answers_despite_a_damaged_stamp(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "docs"), tmp_path / "db"
    corpus.index(docs, db, "--exclude", "drafts/*", "--exclude", 'odd "name",1')
    corpus.index(docs, db, "--table", "damaged")
    lance.dataset(str(db / "damaged.lance")).update_schema_metadata({layout.META_EXCLUDE: '["unclosed'})

    async def session(client):
        return await call(client, "lancedb_status")

    # The SDK's client checks the reply against the published output schema: a list where it declares one.
    result = serve(db, session, LANCELOT_TABLES="documents,damaged")
    assert not result.is_error, result.content[0].text
    documents, damaged = result.structured_content["tables"]
    assert documents["metadata"]["exclude"] == ["drafts/*", 'odd "name",1']
    assert (
        documents["metadata"]["chunk_size"] == "1200"
        and documents["metadata"]["layout_version"] == layout.LAYOUT_VERSION
    )
    assert "note" not in documents
    assert "exclude" not in damaged["metadata"] and damaged["metadata"]["chunk_size"] == "1200"
    assert damaged["note"] == (
        "its lancelot.exclude stamp is not a JSON list of patterns ('[\"unclosed'), so metadata leaves it out; "
        "a rebuild with lancelot-index stamps it again"
    )
    assert damaged["searchTypes"] == ["text"] and damaged["rows"] == documents["rows"]


def test_a_rebuild_is_seen_at_the_next_call_without_a_restart(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "docs"), tmp_path / "db"
    corpus.index(docs, db)

    async def session(client):
        before = (await call(client, "lancedb_search", {"query": "zeppelin", "mode": "text"})).structured_content
        (docs / "airship.md").write_text("# Airships\n\nThe zeppelin is moored behind the shop.\n", encoding="utf-8")
        corpus.index(docs, db)
        after = (await call(client, "lancedb_search", {"query": "zeppelin", "mode": "text"})).structured_content
        return before, after

    before, after = serve(db, session)
    assert before["count"] == 0
    assert [hit["source"] for hit in after["hits"]] == ["airship.md"]
    assert after["textMatch"] == "bm25"


def test_searches_during_rebuilds_see_a_whole_table(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "docs"), tmp_path / "db"
    corpus.index(docs, db)
    searches_during_rebuilds(docs, db, lambda: corpus.index_command(docs, db))


def _frame(number, method, params=None):
    message = {"jsonrpc": "2.0", "method": method}
    if number is not None:
        message["id"] = number
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


def _exchange(process, requests, ids):
    """Send `requests`, read stdout lines until every id in `ids` is answered, close stdin, wait for the exit."""
    watchdog = threading.Timer(120, process.kill)
    watchdog.start()
    try:
        process.stdin.write(requests)
        process.stdin.flush()
        lines = []
        while not ids <= {json.loads(line).get("id") for line in lines}:  # every line must parse
            line = process.stdout.readline()
            assert line, "the server closed stdout before answering"
            lines.append(line)
        process.stdin.close()  # then the server exits on its own
        lines += process.stdout.readlines()
        stderr = process.stderr.read() if process.stderr else ""  # (None: the caller sent it to a file)
        assert process.wait() == 0, stderr
    finally:
        watchdog.cancel()
    return lines, stderr


def test_stdout_is_json_rpc_only_even_when_libraries_print(lancelot_db, tmp_path):
    # A library that prints, writes to fd 1 and warns as it is imported: mcp before the transport starts,
    # lance while it serves (the table opens in the background as the server starts).
    noisy = tmp_path / "noisy"
    noisy.mkdir()
    (noisy / "sitecustomize.py").write_text(
        "import os, sys, warnings, importlib.abc\n"
        "class Noisy(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name in ('mcp', 'lance'):\n"
        "            print('STRAY PRINT', name)\n"
        "            sys.stdout.flush()\n"
        "            os.write(1, b'STRAY FD WRITE\\n')\n"
        "            warnings.warn('STRAY WARNING')\n"
        "        return None\n"
        "sys.meta_path.insert(0, Noisy())\n",
        encoding="utf-8",
    )
    requests = "".join(
        [
            _frame(
                1,
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
            ),
            _frame(None, "notifications/initialized"),
            _frame(2, "tools/list"),
            _frame(3, "tools/call", {"name": "lancedb_search", "arguments": {"query": "chain", "mode": "text"}}),
            _frame(4, "tools/call", {"name": "lancedb_status", "arguments": {}}),
            "this line is not JSON\n",
            _frame(5, "tools/call", {"name": "lancedb_version", "arguments": {}}),
        ]
    )
    env = {**os.environ, "LANCEDB_PATH": str(lancelot_db), "PYTHONPATH": str(noisy), "XDG_CONFIG_HOME": str(tmp_path)}
    with subprocess.Popen(
        [LANCELOT, "--log-level", "DEBUG"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        lines, stderr = _exchange(process, requests, ids={1, 2, 3, 4, 5})
    messages = [json.loads(line) for line in lines]
    assert all(message["jsonrpc"] == "2.0" for message in messages)
    by_id = {message.get("id"): message for message in messages}
    assert {1, 2, 3, 4, 5} <= set(by_id)
    assert by_id[3]["result"]["structuredContent"]["count"] >= 1
    assert "STRAY" not in "".join(lines)
    assert stderr.count("STRAY PRINT") == 2 and stderr.count("STRAY FD WRITE") == 2
    assert "STRAY WARNING" in stderr


def test_every_line_gets_an_answer_even_a_lone_surrogate_or_one_that_is_no_message(lancelot_db, tmp_path):
    # JSON.stringify writes a string cut through an emoji as a lone "\\ud83d"; the SDK refuses it.
    cut_emoji = '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", ' + (
        '"params": {"name": "lancedb_search", "arguments": {"query": "chain \\ud83d", "mode": "text"}}}\n'
    )
    requests = "".join(
        [
            _frame(
                1,
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
            ),
            _frame(None, "notifications/initialized"),
            cut_emoji,
            "this line is not JSON\n",
            '{"neither": "a request nor a reply"}\n',
            _frame(4, "ping"),
        ]
    )
    env = {**os.environ, "LANCEDB_PATH": str(lancelot_db), "XDG_CONFIG_HOME": str(tmp_path)}
    with subprocess.Popen(
        [LANCELOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        lines, stderr = _exchange(process, requests, ids={1, 3, 4})
    messages = [json.loads(line) for line in lines]
    search = next(message for message in messages if message.get("id") == 3)
    assert search["result"]["structuredContent"]["query"] == "chain \ufffd"
    assert search["result"]["structuredContent"]["count"] >= 1
    refusals = [message["error"] for message in messages if message.get("id") is None]
    assert [(error["code"], error["message"]) for error in refusals] == [
        (-32700, "Parse error: the line is not JSON"),
        (-32600, "Invalid request: the line is not a JSON-RPC message"),
    ]
    assert "Traceback" not in stderr


def test_the_server_exits_when_stdin_closes(lancelot_db, tmp_path):
    env = {**os.environ, "LANCEDB_PATH": str(lancelot_db), "XDG_CONFIG_HOME": str(tmp_path)}
    with subprocess.Popen(
        [LANCELOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as process:
        process.stdin.close()
        try:
            assert process.wait(timeout=60) == 0
        finally:
            process.kill()
        assert process.stdout.read() == b""


def first_search_and_status(db, cwd, **environ):
    async def session(client):
        return await call(client, "lancedb_search", {"query": "chain"}), await call(client, "lancedb_status")

    return serve_logged(db, session, cwd, **environ)


def warnings(stderr):
    return [line for line in stderr.splitlines() if "[warning" in line]


def test_a_relative_database_path_that_leads_nowhere_is_named_at_start_and_in_each_answer(tmp_path):
    elsewhere = tmp_path / "elsewhere"  # where the client starts the server; the database is in tmp_path
    elsewhere.mkdir()
    (search, status), stderr = first_search_and_status("lancelot-db", elsewhere)
    message = (
        f"The database folder {elsewhere / 'lancelot-db'} does not exist: LANCEDB_PATH 'lancelot-db' is relative, so "
        f"it was resolved against the folder the client started the server in ({elsewhere}). Set LANCEDB_PATH to an "
        "absolute path instead."
    )
    assert len(warnings(stderr)) == 1 and message in warnings(stderr)[0], stderr
    assert search.is_error and search.content[0].text == message  # no advice to build a database there
    assert status.structured_content["database"]["error"] == message


def test_a_relative_database_path_that_works_from_here_is_named_at_start_and_in_the_status(tmp_path):
    corpus.index(corpus.write_docs(tmp_path / "docs"), tmp_path / "lancelot-db")
    (search, status), stderr = first_search_and_status("lancelot-db", tmp_path)
    message = (
        f"LANCEDB_PATH 'lancelot-db' is relative, so it was resolved against the folder the client started the "
        f"server in ({tmp_path}): {tmp_path / 'lancelot-db'}. A client started elsewhere finds no database there; "
        f"set LANCEDB_PATH to {tmp_path / 'lancelot-db'}."
    )
    assert len(warnings(stderr)) == 1 and message in warnings(stderr)[0], stderr
    assert not search.is_error and search.structured_content["hits"]
    assert status.structured_content["database"]["note"] == message


def test_no_database_or_a_wrong_one_is_named_at_start_once(tmp_path):
    _, stderr = first_search_and_status(None, tmp_path)
    assert len(warnings(stderr)) == 1 and "No database is configured. Set LANCEDB_PATH" in stderr, stderr
    (search, _), stderr = first_search_and_status(tmp_path / "nowhere", tmp_path)
    message = (
        f"The database folder {tmp_path / 'nowhere'} does not exist (LANCEDB_PATH; the server runs in {tmp_path}). "
        "Set LANCEDB_PATH to the folder that lancelot-index wrote."
    )
    assert len(warnings(stderr)) == 1 and message in stderr, stderr
    assert search.content[0].text == message
    corpus.index(corpus.write_docs(tmp_path / "docs"), tmp_path / "db", "--table", "tut")
    _, stderr = first_search_and_status(tmp_path / "db", tmp_path, LANCEDB_TABLE="tutt")
    assert warnings(stderr) and f"The database {tmp_path / 'db'} holds no table 'tutt' (LANCEDB_TABLE)." in stderr
    _, stderr = first_search_and_status(tmp_path / "db", tmp_path, LANCEDB_TABLE="tut")
    assert warnings(stderr) == [], stderr


@SHARED
def test_auto_on_a_table_without_vectors_carries_no_note_and_an_asked_mode_does(lancelot_db, servers):
    async def session(client):
        replies = {}
        for mode in ("auto", "vector", "hybrid"):
            replies[mode] = await call(client, "lancedb_search", {"query": "chain", "mode": mode})
        replies["query"] = await call(client, "lancedb_query", {"query": "chain"})
        return replies

    replies = servers.over("stdio", lancelot_db, session)  # `documents`: BM25, no vectors, no key
    auto = replies["auto"].structured_content
    assert (auto["searchType"], auto["textMatch"]) == ("text", "bm25") and auto["hits"]
    assert "note" not in auto
    assert "- note:" not in replies["query"].content[0].text and "--embed" not in replies["query"].content[0].text
    for mode in ("vector", "hybrid"):
        note = replies[mode].structured_content["note"]
        assert (
            note == "the table has no vector column (index it with `lancelot-index --embed`); used text search instead."
        )
