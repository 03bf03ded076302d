"""Tool arguments are checked exactly as the published schemas say, through the SDK's own client in process:
integers are numbers (never "3" or true), every string has a maximum, and no refusal echoes a long value."""

from __future__ import annotations

import pytest
from tests.server.test_app import call, listed

from lancelot_server.arguments import MAX_ADDRESS, MAX_TABLE


@pytest.mark.parametrize(
    ("tool", "arguments", "words"),
    [
        ("lancedb_search", {"query": "chain", "limit": "3"}, ["limit", "valid integer", "'3'"]),
        ("lancedb_search", {"query": "chain", "limit": True}, ["limit", "valid integer", "True"]),
        ("lancedb_search", {"query": "chain", "limit": 3.5}, ["limit", "3.5"]),
        ("lancedb_search", {"query": "chain", "perDocument": "2"}, ["perDocument", "'2'"]),
        ("lancedb_query", {"query": "chain", "budget": "600"}, ["budget", "'600'"]),
        ("lancedb_read", {"source": "guide/puncture.md", "from": "1"}, ["from", "'1'"]),
        ("lancedb_read", {"id": "guide/puncture.md#1", "before": False}, ["before", "False"]),
        ("lancedb_search", {"query": ["chain"]}, ["query", "valid string", "an array"]),
        ("lancedb_search", {"query": "chain", "table": {"name": "x"}}, ["table", "an object"]),
    ],
)
def test_values_of_another_type_are_refused_as_the_schema_says(lancelot_db, tool, arguments, words):
    result = call(lancelot_db, tool, arguments)
    assert result.is_error
    for word in words:
        assert word in result.content[0].text


def test_an_integer_written_with_a_zero_fraction_is_an_integer_as_json_schema_says(lancelot_db):
    arguments = {"query": "puncture", "mode": "text", "perDocument": 3}
    whole = call(lancelot_db, "lancedb_search", {**arguments, "limit": 2})
    written = call(lancelot_db, "lancedb_search", {**arguments, "limit": 2.0})
    assert not written.is_error and written.structured_content["count"] == 2
    assert written.structured_content["hits"] == whole.structured_content["hits"]


@pytest.mark.parametrize(("name", "most"), [("table", MAX_TABLE), ("path", MAX_ADDRESS), ("query", 2000)])
def test_every_string_argument_has_a_published_maximum_and_a_longer_one_is_not_echoed(lancelot_db, name, most):
    schema = listed(lancelot_db)["lancedb_search"].input_schema["properties"][name]
    options = [schema, *schema.get("anyOf", [])]
    options += [branch for option in options for branch in option.get("oneOf", [])]  # table: a name or a list
    declared = next(option["maxLength"] for option in options if "maxLength" in option)
    assert declared == most
    arguments = {"query": "chain", name: "z" * 1_000_000}
    result = call(lancelot_db, "lancedb_search", arguments)
    assert result.is_error and "1,000,000 characters" in result.content[0].text
    assert len(result.content[0].text) < 300


def test_a_missing_table_is_named_by_a_short_prefix(lancelot_db):
    result = call(lancelot_db, "lancedb_search", {"query": "chain", "table": "t" * MAX_TABLE})
    assert result.is_error and "not in the database" in result.content[0].text
    assert "t" * 79 + "…" in result.content[0].text and "t" * 81 not in result.content[0].text


def test_a_string_that_looks_like_json_is_that_text_not_the_json(lancelot_db):
    # The SDK would read a path of "null" as no path at all, and "[1]" as an array.
    for path in ("null", "[1]", '{"a": 1}'):
        result = call(lancelot_db, "lancedb_search", {"query": "chain", "mode": "text", "path": path})
        assert not result.is_error, result.content[0].text
        assert result.structured_content["hits"] == []
