"""The MCP surface through the SDK's own client, in process: tool list, schemas, replies and tool errors."""

from __future__ import annotations

import json

import anyio
import jsonschema
import pytest
from mcp import Client

from lancelot_schema.settings import resolve
from lancelot_server.app import build_server

TOOLS = ("lancedb_search", "lancedb_query", "lancedb_read", "lancedb_status", "lancedb_version")


def session(db, calls, **environ):
    """Run `calls(client)` against a fresh server over `db`; returns what it returns."""
    server = build_server(resolve({"LANCEDB_PATH": str(db), **environ}))

    async def run():
        async with Client(server) as client:
            return await calls(client)

    return anyio.run(run)


def listed(db):
    async def calls(client):
        return {tool.name: tool for tool in (await client.list_tools()).tools}

    return session(db, calls)


def call(db, name, arguments, **environ):
    async def calls(client):
        return await client.call_tool(name, arguments)

    return session(db, calls, **environ)


def test_the_four_tools_are_listed_read_only_with_titles(lancelot_db):
    tools = listed(lancelot_db)
    assert tuple(tools) == TOOLS
    for tool in tools.values():
        hints = tool.annotations
        assert hints.title and tool.title == hints.title
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
            True,
            False,
            True,
            False,
        )
        assert tool.description


def test_descriptions_reach_the_model_without_source_indentation(lancelot_db):
    for tool in listed(lancelot_db).values():
        assert tool.description == tool.description.strip()
        assert "\n " not in tool.description, tool.description
    assert "\n\nsearchType says" in listed(lancelot_db)["lancedb_search"].description


def test_no_parameter_tools_admit_no_properties(lancelot_db):
    tools = listed(lancelot_db)
    for name in ("lancedb_status", "lancedb_version"):
        schema = tools[name].input_schema
        assert schema["type"] == "object" and schema["properties"] == {} and schema["additionalProperties"] is False


def test_search_parameters_declare_their_limits(lancelot_db):
    tools = listed(lancelot_db)
    search, query = tools["lancedb_search"].input_schema, tools["lancedb_query"].input_schema
    # Exactly one of query and queries is given: neither is required by the schema, the tool says which to pass.
    assert "required" not in search and search["additionalProperties"] is False
    phrasing, null = search["properties"]["query"]["anyOf"]
    assert (phrasing["minLength"], phrasing["maxLength"], null) == (1, 2000, {"type": "null"})
    several = search["properties"]["queries"]["anyOf"][0]
    assert (several["minItems"], several["maxItems"], several["uniqueItems"]) == (1, 5, True)
    assert several["items"] == phrasing
    assert search["properties"]["queries"] == query["properties"]["queries"]
    assert search["properties"]["mode"]["enum"] == ["auto", "text", "vector", "hybrid"]
    assert search["properties"]["mode"]["default"] == "auto"
    limit = search["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 5)
    assert query["properties"]["limit"]["default"] == 8
    budget = query["properties"]["budget"]
    assert (budget["minimum"], budget["maximum"], budget["default"]) == (500, 100_000, 12_000)
    filters = {"tags", "tagMatch", "since", "until", "types"}
    shared = {"query", "queries", "mode", "limit", "table", "path", "perDocument", *filters}
    assert set(search["properties"]) == shared
    assert set(query["properties"]) == {*shared, "budget"}
    per_document = search["properties"]["perDocument"]
    assert (per_document["minimum"], per_document["maximum"], per_document["default"]) == (1, 50, 1)


def test_search_replies_with_json_text_and_matching_structured_content(lancelot_db):
    schema = listed(lancelot_db)["lancedb_search"].output_schema
    result = call(lancelot_db, "lancedb_search", {"query": "escaping air", "mode": "text"})
    assert not result.is_error
    assert json.loads(result.content[0].text) == result.structured_content
    jsonschema.validate(result.structured_content, schema)
    assert result.structured_content["hits"][0]["source"] == "guide/puncture.md"


def test_a_fallback_reply_with_a_note_matches_the_schema(lancelot_db):
    schema = listed(lancelot_db)["lancedb_search"].output_schema
    result = call(lancelot_db, "lancedb_search", {"query": "hiss", "table": "workspace"}, LANCELOT_TABLES="workspace")
    jsonschema.validate(result.structured_content, schema)
    assert "no API key" in result.structured_content["note"]


@pytest.mark.parametrize("name", ["lancedb_status", "lancedb_version"])
def test_status_and_version_match_their_schemas(lancelot_db, name):
    schema = listed(lancelot_db)[name].output_schema
    result = call(lancelot_db, name, {})
    assert not result.is_error
    jsonschema.validate(result.structured_content, schema)
    assert json.loads(result.content[0].text) == result.structured_content


def test_query_replies_with_one_markdown_block(lancelot_db):
    result = call(lancelot_db, "lancedb_query", {"query": "chain", "mode": "text", "budget": 500})
    assert not result.is_error and len(result.content) == 1
    text = result.content[0].text
    assert text.startswith("# Search results from `documents`") and len(text) <= 500
    assert "- search type: text (bm25)" in text


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"query": "chain", "limit": 51}, ["limit", "50", "got 51"]),
        ({"query": "chain", "limit": 0}, ["limit", "got 0"]),
        ({"query": ""}, ["query", "at least 1 character"]),
        ({"query": "x" * 2001}, ["query", "at most 2000", "2,001 characters"]),
        ({"query": "chain", "mode": "fuzzy"}, ["mode", "'auto'"]),
        ({"query": "chain", "limt": 3}, ["limt is not a parameter", "limit"]),
        ({}, ["Nothing to search for", "Pass query", "or queries"]),
        ({"query": "chain", "queries": ["chain"]}, ["not both", "query for one phrasing", "queries (a list"]),
        ({"queries": []}, ["queries", "at least 1 item"]),
        ({"queries": ["a", "b", "c", "d", "e", "f"]}, ["queries", "at most 5 phrasings", "keep the 5", "6 items"]),
        ({"queries": ["chain", " chain "]}, ["queries", "[1] repeats [0] once trimmed", "reword"]),
        ({"queries": ["chain", ""]}, ["queries[1]", "at least 1 character"]),
        ({"queries": ["chain", "   "]}, ["queries[1] is empty", "words or question"]),
        ({"queries": ["chain", "x" * 2001]}, ["queries[1]", "at most 2000", "2,001 characters"]),
        ({"queries": "chain"}, ["queries", "valid list"]),
        ({"query": "chain", "table": "nope"}, ["'nope'", "which holds 'documents'"]),
    ],
)
def test_bad_input_is_a_tool_error_not_a_protocol_error(lancelot_db, arguments, words):
    result = call(lancelot_db, "lancedb_search", arguments)
    assert result.is_error
    message = result.content[0].text
    for word in words:
        assert word in message
    assert "pydantic" not in message


def test_a_budget_out_of_range_is_a_tool_error(lancelot_db):
    result = call(lancelot_db, "lancedb_query", {"query": "chain", "budget": 100_001})
    assert result.is_error and "budget" in result.content[0].text


def test_extra_arguments_to_status_are_a_tool_error(lancelot_db):
    result = call(lancelot_db, "lancedb_status", {"verbose": True})
    assert result.is_error and "verbose is not a parameter" in result.content[0].text


def test_a_missing_database_is_a_tool_error_that_says_what_to_do(tmp_path):
    result = call(tmp_path / "missing", "lancedb_search", {"query": "chain"})
    assert result.is_error
    assert "does not exist" in result.content[0].text and "LANCEDB_PATH" in result.content[0].text
    assert not (tmp_path / "missing").exists()


def test_lancedb_query_escapes_control_characters_of_the_query_in_its_markdown(lancelot_db):
    query = "chain \x1b[2J\x1b]0;owned\x07 oil\x00 \x9b31m \u202eevil"
    result = call(lancelot_db, "lancedb_query", {"query": query, "mode": "text"})
    block = result.content[0].text
    assert not result.is_error and "Clean the chain" in block
    assert not any((ord(char) < 0x20 and char != "\n") or 0x7F <= ord(char) <= 0x9F for char in block), repr(block)
    assert "\u202e" not in block
    assert "- query: chain \\x1b[2J\\x1b]0;owned\\x07 oil\\x00 \\x9b31m \\u202eevil\n" in block
