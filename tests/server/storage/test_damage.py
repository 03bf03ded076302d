"""Tables whose files were lost after indexing (a partial copy, files deleted by hand): every tool names the
damage in the designed wording instead of Lance's `Not found`, and a lost full-text index costs only BM25."""

from __future__ import annotations

import re
import shutil

import jsonschema
import pytest
from tests.server.conftest import endpoint_tools
from tests.server.test_app import call, listed

from lancelot_server.errors import TableLayoutError

UNREADABLE = (
    r"Table '{table}' in .* cannot be read \(damaged or incomplete: data/\w+\.lance is missing\)\. "
    r"Rebuild it with lancelot-index\."
)
INDEX_NOTE = (
    "the full-text index cannot be read (damaged or incomplete; rebuild the table with lancelot-index); "
    "used substring search instead."
)


def damaged_copy(lancelot_db, tmp_path, table, lose):
    """A database holding a copy of `table` from `lancelot_db` without its data files (`lose="data"`) or
    without its index folders (`lose="_indices"`)."""
    db = tmp_path / "db"
    shutil.copytree(lancelot_db / f"{table}.lance", db / f"{table}.lance")
    lost = list((db / f"{table}.lance" / lose).iterdir())
    assert lost
    for path in lost:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return db


@pytest.mark.parametrize(
    ("mode", "query"),
    [("text", "chain"), ("text", "DEC-0054"), ("vector", "chain"), ("hybrid", "chain"), ("auto", "chain")],
)
def test_lost_data_files_are_named_in_every_mode(lancelot_db, tmp_path, embedding_server, make_tools, mode, query):
    db = damaged_copy(lancelot_db, tmp_path, "embedded", "data")
    tools = endpoint_tools(make_tools, db, embedding_server)
    with pytest.raises(TableLayoutError, match=UNREADABLE.format(table="embedded")):
        tools.search(query, mode=mode)
    with pytest.raises(TableLayoutError, match=UNREADABLE.format(table="embedded")):
        tools.query(query, mode=mode)


def test_lost_data_files_of_a_table_without_an_index_are_named(lancelot_db, tmp_path, make_tools):
    db = damaged_copy(lancelot_db, tmp_path, "plain", "data")
    with pytest.raises(TableLayoutError, match=UNREADABLE.format(table="plain")):
        make_tools(db, LANCEDB_TABLE="plain").search("chain", mode="text")


def test_status_says_a_table_with_lost_data_files_is_unreadable(lancelot_db, tmp_path, make_tools):
    status = make_tools(damaged_copy(lancelot_db, tmp_path, "documents", "data")).status()
    table = status["table"]
    assert table["exists"] is True and table["readable"] is False
    assert re.fullmatch(UNREADABLE.format(table="documents"), table["error"])
    assert status["searchTypes"] == []


def test_a_lost_full_text_index_falls_back_to_substring_with_a_note(lancelot_db, tmp_path, make_tools):
    tools = make_tools(damaged_copy(lancelot_db, tmp_path, "documents", "_indices"))
    reply = tools.search("chain", mode="text")
    assert (reply["textMatch"], reply["note"]) == ("substring", INDEX_NOTE)
    assert {hit["source"] for hit in reply["hits"]} == {"guide/chain.md"}
    assert tools.search("chain")["note"] == INDEX_NOTE  # auto on a table without vectors adds nothing to say
    assert "the full-text index cannot be read" in tools.query("chain", mode="text")


def test_hybrid_search_over_a_lost_index_fuses_substring_hits_with_a_note(
    lancelot_db, tmp_path, embedding_server, make_tools
):
    tools = endpoint_tools(make_tools, damaged_copy(lancelot_db, tmp_path, "embedded", "_indices"), embedding_server)
    reply = tools.search("chain", mode="hybrid")
    assert (reply["searchType"], reply["textMatch"], reply["note"]) == ("hybrid", "substring", INDEX_NOTE)
    assert reply["hits"]


def test_status_of_a_lost_index_says_text_search_matches_substrings(
    lancelot_db, tmp_path, embedding_server, make_tools
):
    tools = endpoint_tools(make_tools, damaged_copy(lancelot_db, tmp_path, "embedded", "_indices"), embedding_server)
    status = tools.status()
    table = status["table"]
    assert (table["readable"], table["fullTextIndex"]) == (True, False)
    assert table["note"] == (
        "the full-text index cannot be read (damaged or incomplete; rebuild the table with lancelot-index); "
        "text search matches substrings"
    )
    assert status["searchTypes"] == ["text", "vector"]
    # The passage numbers' index is lost too: the documents go uncounted, the rest of the freshness is there.
    assert (table["freshness"]["documents"], table["freshness"]["passages"]) == (None, table["rows"])


def test_an_intact_table_is_readable(lancelot_db, make_tools):
    table = make_tools(lancelot_db).status()["table"]
    assert (table["readable"], table["fullTextIndex"]) == (True, True)
    assert "error" not in table and "note" not in table


def test_over_mcp_lost_data_is_a_tool_error_in_the_designed_wording(lancelot_db, tmp_path):
    db = damaged_copy(lancelot_db, tmp_path, "documents", "data")
    result = call(db, "lancedb_search", {"query": "chain", "mode": "text"})
    assert result.is_error
    assert re.fullmatch(UNREADABLE.format(table="documents"), result.content[0].text)
    status = call(db, "lancedb_status", {})
    jsonschema.validate(status.structured_content, listed(db)["lancedb_status"].output_schema)
    assert status.structured_content["table"]["readable"] is False
