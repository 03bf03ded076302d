"""The tools as plain functions over real databases: modes, fallbacks and their notes, layouts, errors."""

from __future__ import annotations

import json
import shutil

import lance
import pytest
from tests.server import corpus
from tests.server.conftest import endpoint_tools

from lancelot_schema import layout
from lancelot_schema.settings import resolve
from lancelot_server.errors import DatabaseNotFound, InvalidRequest, TableLayoutError, TableNotFound
from lancelot_server.storage.store import Store
from lancelot_server.tools import Tools


def test_text_search_uses_the_full_text_index(lancelot_db, make_tools):
    reply = make_tools(lancelot_db).search("escaping air", mode="text")
    assert (reply["searchType"], reply["textMatch"], reply["mode"]) == ("text", "bm25", "text")
    assert "note" not in reply
    assert reply["count"] == len(reply["hits"]) >= 1
    top = reply["hits"][0]
    assert top["source"] == "guide/puncture.md"
    assert top["title"] == "Fixing a puncture"
    assert top["id"].startswith("guide/puncture.md#")
    assert "hiss of escaping air" in top["text"]
    assert top["score"] > 0
    # Layout 2 locates the passage: its number and (Markdown) its lines; no link template, so no url.
    assert set(top) == {"id", "title", "source", "heading", "text", "score", "metadata", "passage", "lines", "table"}
    assert top["table"] == reply["table"] == "documents"
    assert top["id"] == f"guide/puncture.md#{top['passage']}"
    # The indexer's hashes are its bookkeeping, not the document's: neither read nor shown.
    assert top["metadata"] == {"file_type": "md"}


def test_another_tools_columns_come_back_as_metadata_whatever_their_names(tmp_path, make_tools):
    # Only a table lancelot-index stamped hides its hashes; another tool's columns of those names are its data.
    import lance
    import pyarrow as pa

    rows = {"text": ["the hiss of escaping air"], "path": ["tube.md"], "text_hash": ["t1"], "file_hash": ["f1"]}
    lance.write_dataset(pa.table(rows), str(tmp_path / "documents.lance"))
    (hit,) = make_tools(tmp_path).search("hiss", mode="text")["hits"]
    assert hit["source"] == "tube.md"
    assert hit["metadata"] == {"text_hash": "t1", "file_hash": "f1"}


def test_bm25_scores_are_in_descending_order(lancelot_db, make_tools):
    hits = make_tools(lancelot_db).search("chain oil patch", mode="text", limit=10)["hits"]
    scores = [hit["score"] for hit in hits]
    assert len(scores) >= 2 and scores == sorted(scores, reverse=True)


def test_substring_runs_when_bm25_finds_nothing(lancelot_db, make_tools):
    # "unct" is inside "puncture" but is no token of the index, so BM25 finds nothing.
    reply = make_tools(lancelot_db).search("unct", mode="text")
    assert reply["textMatch"] == "substring"
    assert {hit["source"] for hit in reply["hits"]} == {"guide/puncture.md"}
    assert all(hit["score"] == 0.5 for hit in reply["hits"])  # one word, found once: 1 × 1/2


def test_a_table_without_an_index_gets_substring_search_scored_by_share_of_words(lancelot_db, make_tools):
    reply = make_tools(lancelot_db, LANCEDB_TABLE="plain").search("CHAIN recall zebra", mode="text", limit=10)
    assert (reply["table"], reply["textMatch"]) == ("plain", "substring")
    scores = [hit["score"] for hit in reply["hits"]]
    assert scores[0] == pytest.approx(2 / 3 * 4 / 5)  # "chain" 3 times and "recall" once; never "zebra"
    assert scores == sorted(scores, reverse=True)
    assert "DEC-0054" in reply["hits"][0]["text"]


def test_an_identifier_is_found(lancelot_db, make_tools):
    for table in ("documents", "plain"):
        hits = make_tools(lancelot_db, LANCELOT_TABLES="plain").search("DEC-0054", mode="text", table=table)["hits"]
        assert hits and "DEC-0054" in hits[0]["text"], table


def test_nothing_found_is_an_empty_list(lancelot_db, make_tools):
    reply = make_tools(lancelot_db).search("xylophone", mode="text")
    assert (reply["count"], reply["hits"], reply["textMatch"]) == (0, [], "substring")


def test_limit_caps_the_hits(lancelot_db, make_tools):
    assert make_tools(lancelot_db).search("chain patch hours", mode="text", limit=2)["count"] == 2


@pytest.mark.parametrize("table", ["documents", "plain", "workspace"])
def test_a_query_of_stop_words_only_gets_no_hits_and_a_note_saying_why(lancelot_db, make_tools, table):
    reply = make_tools(lancelot_db, LANCELOT_TABLES="*").search("The, and OF the!", mode="text", table=table)
    assert reply["hits"] == []
    assert reply["note"] == (
        "the query holds only words so common that text search leaves them out (the, and, of); "
        "add a word that says what to look for."
    )


def test_a_punctuation_query_matches_literally_and_scores_by_how_often(tmp_path, make_tools):
    docs = {"a.md": "# A\n\nUse a -> b, then b -> c, then c -> d.\n", "b.md": "# B\n\nOnly x -> y here.\n"}
    corpus.index(corpus.write_docs(tmp_path / "docs", docs), tmp_path / "db")
    hits = make_tools(tmp_path / "db").search("->", mode="text")["hits"]
    assert [(hit["source"], hit["score"]) for hit in hits] == [("a.md", 0.75), ("b.md", 0.5)]


def test_path_prefix_keeps_only_hits_under_it(lancelot_db, make_tools):
    tools = make_tools(lancelot_db, LANCELOT_TABLES="plain")
    for table in ("documents", "plain"):
        words = "chain patch workshop members"
        everywhere = tools.search(words, mode="text", table=table, limit=50)["hits"]
        guide = tools.search(words, mode="text", table=table, limit=50, path="guide/")["hits"]
        assert (
            {hit["source"] for hit in everywhere}
            > {hit["source"] for hit in guide}
            == {
                "guide/puncture.md",
                "guide/chain.md",
            }
        )


def test_path_prefix_is_matched_literally(lancelot_db, make_tools):
    tools = make_tools(lancelot_db, LANCELOT_TABLES="plain")
    for table in ("documents", "plain"):
        for prefix in ("%", "_", "guide%", "g_ide/", "' OR '1'='1", "\\", "guide/*"):
            assert tools.search("the", mode="text", table=table, path=prefix)["hits"] == [], (table, prefix)


HOSTILE = ["'", "%", "_", "\\", '"; DROP', "a\x00b", "🚲", "x" * 2000, "' OR 1=1 --", "text:chain AND (", "*"]


@pytest.mark.parametrize("table", ["documents", "plain"])
@pytest.mark.parametrize("query", HOSTILE, ids=repr)
def test_hostile_queries_are_data(lancelot_db, table, query, make_tools):
    tools = make_tools(lancelot_db, LANCELOT_TABLES="plain")
    reply = tools.search(query, mode="text", table=table, limit=50)
    assert reply["query"] == query and reply["count"] == len(reply["hits"])
    if " " not in query:  # one word: only odd.txt holds any of these strings
        assert {hit["source"] for hit in reply["hits"]} <= {"notes/odd.txt"}


@pytest.mark.parametrize("table", ["documents", "plain"])
def test_special_characters_match_literally_not_as_patterns(lancelot_db, table, make_tools):
    tools = make_tools(lancelot_db, LANCELOT_TABLES="plain")
    for query in ("%", "_", "\\", "'", "🚲", '"; DROP'):
        hits = tools.search(query, mode="text", table=table)["hits"]
        assert [hit["source"] for hit in hits] == ["notes/odd.txt"], query
    assert tools.search("a\x00b", mode="text", table=table)["hits"] == []


def test_rows_survive_a_hostile_query(lancelot_db, make_tools):
    tools = make_tools(lancelot_db, LANCELOT_TABLES="plain")
    before = tools.status()["table"]["rows"]
    tools.search('x"; DROP TABLE documents; --', mode="text")
    tools.search("'; DELETE FROM documents WHERE '1'='1", mode="text", table="plain")
    assert tools.status()["table"]["rows"] == before
    assert "documents" in tools.status()["database"]["tables"]


def test_anythingllm_rows_lose_their_header_and_keep_its_fields(lancelot_db, make_tools):
    reply = make_tools(lancelot_db, LANCEDB_TABLE="workspace").search("hiss", mode="text")
    assert reply["textMatch"] == "substring"  # AnythingLLM writes no full-text index
    (hit,) = reply["hits"]
    assert hit["text"] == "Pump the tube and listen for the hiss of escaping air."
    assert hit["source"] == "localfiles/puncture.md"  # chunkSource, the first source column
    assert hit["title"] == "puncture.md"
    assert hit["heading"] is None
    assert hit["metadata"]["sourceDocument"] == "puncture.md"
    assert hit["metadata"]["published"] == "1/2/2025, 10:00:00 AM"
    assert hit["metadata"]["docSource"] == "a text file uploaded by the user."
    assert hit["metadata"]["wordCount"] == 11
    assert "vector" not in hit["metadata"] and "text" not in hit["metadata"]


def test_anythingllm_hits_never_show_the_header(lancelot_db, make_tools):
    # The header is part of the stored text, so its words match; the hit's text never carries it.
    hits = make_tools(lancelot_db, LANCEDB_TABLE="workspace").search("sourceDocument", mode="text", limit=10)["hits"]
    assert len(hits) == 3
    assert all("<document_metadata>" not in hit["text"] and "sourceDocument" not in hit["text"] for hit in hits)


def test_auto_without_a_key_searches_text_and_says_why(lancelot_db, make_tools):
    reply = make_tools(lancelot_db, LANCEDB_TABLE="workspace").search("hiss")
    assert (reply["mode"], reply["searchType"]) == ("auto", "text")
    assert "no API key" in reply["note"]


def test_vector_without_a_vector_column_says_so(lancelot_db, make_tools):
    reply = make_tools(lancelot_db, OPENAI_API_KEY="sk-test").search("hiss", mode="vector")
    assert reply["searchType"] == "text"
    assert "no vector column" in reply["note"]


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_vector_search_that_cannot_reach_the_endpoint_falls_back_quickly(lancelot_db, closed_url, make_tools, mode):
    tools = endpoint_tools(make_tools, lancelot_db, closed_url)
    reply = tools.search("hiss", mode=mode)
    assert reply["searchType"] == "text" and reply["hits"]
    assert reply["note"].startswith("vector search failed: cannot reach 127.0.0.1:")


def test_vector_search_with_a_rejected_key_names_the_status(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-8", key="sk-wrong")
    reply = tools.search("hiss", mode="vector")
    assert reply["searchType"] == "text"
    assert "vector search failed" in reply["note"] and "401" in reply["note"]
    assert "sk-wrong" not in json.dumps(reply)


def test_vector_search_finds_the_nearest_rows(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-8")
    reply = tools.search("Roughen the rubber, spread the glue", mode="vector", limit=3)
    assert (reply["searchType"], reply["count"]) == ("vector", 3)
    assert "note" not in reply and "textMatch" not in reply
    distances = [hit["score"] for hit in reply["hits"]]
    assert distances == sorted(distances)  # lower is closer
    assert reply["hits"][0]["source"] == "guide/puncture.md"
    assert embedding_server.requests[0].inputs == ("Roughen the rubber, spread the glue",)


def test_vector_search_respects_the_path_prefix(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-8")
    reply = tools.search("chain", mode="vector", path="notes/", limit=5)
    assert [hit["source"] for hit in reply["hits"]] == ["notes/odd.txt"]


def test_auto_falls_back_when_vector_search_finds_nothing(lancelot_db, embedding_server, make_tools):
    # No full-text index: auto runs vector search, which finds nothing under the prefix.
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded_plain", model="test-8")
    reply = tools.search("chain", path="nowhere/")
    assert reply["searchType"] == "text"
    assert reply["note"].startswith("vector search found nothing")
    assert tools.search("chain", mode="vector", path="nowhere/")["searchType"] == "vector"


def test_a_model_of_another_width_falls_back_with_both_widths(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="workspace", model="test-16")
    reply = tools.search("hiss", mode="vector")
    assert reply["searchType"] == "text"
    assert "width 16" in reply["note"] and "width 384" in reply["note"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": ""}, "empty"),
        ({"query": "   "}, "empty"),
        ({"query": "x" * 2001}, "2,001 characters"),
        ({"query": "x", "limit": 0}, "between 1 and 50"),
        ({"query": "x", "limit": 51}, "between 1 and 50"),
        ({"query": "x", "mode": "fuzzy"}, "Unknown mode"),
    ],
)
def test_bad_arguments_are_refused_with_a_reason(lancelot_db, arguments, message, make_tools):
    with pytest.raises(InvalidRequest, match=message):
        make_tools(lancelot_db).search(**arguments)


def test_a_budget_out_of_range_is_refused(lancelot_db, make_tools):
    with pytest.raises(InvalidRequest, match="budget"):
        make_tools(lancelot_db).query("chain", budget=499)


def test_a_missing_database_folder_is_refused_and_not_created(tmp_path, make_tools):
    missing = tmp_path / "nowhere"
    with pytest.raises(DatabaseNotFound, match="does not exist"):
        make_tools(missing).search("chain")
    assert not missing.exists()


def test_a_file_as_database_is_refused(tmp_path, make_tools):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(DatabaseNotFound, match="is a file, not a folder"):
        make_tools(tmp_path / "file").search("chain")


def test_no_database_configured_is_refused():
    settings = resolve({})
    with pytest.raises(DatabaseNotFound, match="LANCEDB_PATH"):
        Tools(Store(settings.db_path), settings).search("chain")


def test_a_missing_table_names_the_tables_there(lancelot_db, make_tools):
    with pytest.raises(TableNotFound, match=r"'nope'.*'documents'"):
        make_tools(lancelot_db).search("chain", table="nope")


def test_a_listed_table_that_cannot_be_opened_says_so_instead_of_missing(tmp_path, make_tools):
    (tmp_path / "db" / "documents.lance").mkdir(parents=True)
    (tmp_path / "db" / "documents.lance" / "junk").write_text("not a table", encoding="utf-8")
    with pytest.raises(TableLayoutError, match=r"Table 'documents' in .* cannot be read .*lancelot-index"):
        make_tools(tmp_path / "db").search("chain")


def test_a_table_without_the_text_column_is_refused(lancelot_db, make_tools):
    with pytest.raises(TableLayoutError, match=r"no text column 'body'.*LANCEDB_TEXT_COLUMN"):
        make_tools(lancelot_db, LANCEDB_TEXT_COLUMN="body").search("chain")


def test_a_text_column_that_holds_no_text_is_refused_in_every_mode(lancelot_db, make_tools):
    tools = make_tools(lancelot_db, LANCEDB_TABLE="embedded", LANCEDB_TEXT_COLUMN="vector")
    for mode in ("text", "auto"):
        with pytest.raises(TableLayoutError, match=r"'vector'.*not text.*LANCEDB_TEXT_COLUMN"):
            tools.search("chain", mode=mode)


def test_a_malformed_endpoint_url_is_reported_by_status_and_search_falls_back_naming_it(lancelot_db, make_tools):
    tools = make_tools(lancelot_db, LANCEDB_TABLE="embedded", OPENAI_BASE_URL="http://[::1", EMBEDDING_MODEL="test-8")
    assert tools.status()["embedding"]["endpoint"] == "http://[::1"
    reply = tools.search("chain", mode="vector")
    assert reply["searchType"] == "text"
    assert "OPENAI_BASE_URL 'http://[::1' is not a usable URL" in reply["note"]


def test_status_describes_the_indexer_table(lancelot_db, make_tools):
    status = make_tools(lancelot_db).status()
    # The other tables of the database are named, not served (LANCELOT_TABLES unset), so not described.
    named = ["documents", "embedded", "embedded_plain", "plain", "workspace"]
    cache = status["database"].pop("cache")
    assert status["database"] == {"path": str(lancelot_db), "exists": True, "tables": named}
    # The table read from the folder is in Lance's caches (its manifest, its indexes' descriptions), within the bound.
    assert 0 < cache["usedBytes"] <= cache["boundBytes"] == 256 * 1024 * 1024
    table = status["table"]
    assert status["tables"] == [table]
    assert table["name"] == "documents" and table["exists"] is True
    assert table["rows"] >= 4 and table["fullTextIndex"] is True
    assert table["documentReads"] == "indexed"
    assert table["columns"] == list(layout.INDEXER_COLUMNS)
    assert (table["textColumn"], table["titleColumn"], table["sourceColumns"]) == ("text", "title", ["path"])
    assert (table["vectorColumn"], table["vectorWidth"]) == (None, None)
    assert table["metadata"]["chunk_size"] == "1200" and "indexed_at" in table["metadata"]
    assert status["embedding"] == {
        "model": "text-embedding-3-small",
        "endpoint": "api.openai.com",
        "apiKey": False,
        "note": "the table has no vector column (index it with `lancelot-index --embed`); "
        "vector and hybrid search fall back to text search",
    }
    assert status["searchTypes"] == ["text"]


def test_status_leaves_out_an_exclude_stamp_that_holds_no_list_of_patterns_and_says_so(tmp_path, make_tools):
    docs, db = corpus.write_docs(tmp_path / "docs"), tmp_path / "db"
    corpus.index(docs, db)
    stamps = {"empty": "[]", "numbers": "[1, 2]", "object": '{"a": "b"}', "text": '"drafts"', "broken": "[\x1b"}
    for name in stamps:
        shutil.copytree(db / "documents.lance", db / f"{name}.lance")
        lance.dataset(str(db / f"{name}.lance")).update_schema_metadata({layout.META_EXCLUDE: stamps[name]})
    status = make_tools(db, LANCELOT_TABLES=",".join(stamps)).status()
    described = {table["name"]: table for table in status["tables"]}
    assert described["empty"]["metadata"]["exclude"] == [] and "note" not in described["empty"]
    for name in ("numbers", "object", "text", "broken"):
        table = described[name]
        assert "exclude" not in table["metadata"] and table["metadata"]["chunk_size"] == "1200", name
        assert table["note"].startswith("its lancelot.exclude stamp is not a JSON list of patterns"), name
    assert "('[\\x1b')" in described["broken"]["note"]  # a control character is shown escaped


def test_status_of_an_anythingllm_table_with_a_key(lancelot_db, make_tools):
    status = make_tools(lancelot_db, LANCEDB_TABLE="workspace", OPENAI_API_KEY="sk-secret").status()
    table = status["table"]
    assert (table["vectorColumn"], table["vectorWidth"], table["fullTextIndex"]) == ("vector", 384, False)
    assert table["documentReads"] == "scan"  # AnythingLLM's rows are grouped by source with a scan
    assert table["sourceColumns"] == ["chunkSource", "docSource"]
    assert status["embedding"]["apiKey"] is True
    assert status["searchTypes"] == ["text", "vector"]
    assert "sk-secret" not in json.dumps(status)


def test_status_of_a_missing_database_or_table_reports_instead_of_failing(tmp_path, lancelot_db, make_tools):
    status = make_tools(tmp_path / "nowhere").status()
    assert status["database"]["exists"] is False and "does not exist" in status["database"]["error"]
    assert status["table"]["exists"] is False and status["searchTypes"] == []
    status = make_tools(lancelot_db, LANCEDB_TABLE="nope").status()
    assert status["table"]["exists"] is False and "'nope'" in status["table"]["error"]
    assert not (tmp_path / "nowhere").exists()


def test_version_names_every_part(lancelot_db, make_tools):
    version = make_tools(lancelot_db).version()
    assert set(version) == {"lancelot", "lancedb", "lance", "pyarrow", "mcp", "python", "protocolVersions"}
    assert version["lancedb"].startswith("0.40") and version["mcp"].startswith("2.3")
    assert version["lance"].startswith("13.")  # the engine tables are read through
    assert version["protocolVersions"] == ["2025-11-25"]


def test_substring_ignores_case_but_never_reads_a_pattern(lancelot_db, make_tools):
    tools = make_tools(lancelot_db, LANCEDB_TABLE="plain")
    for query in ("C:\\TEMP\\BIKES", "MEMBERS_ONLY", "IT'S"):
        assert [hit["source"] for hit in tools.search(query, mode="text")["hits"]] == ["notes/odd.txt"], query
    for query in ("m.mbers", ".*", "memb[e]rs", "(?i)members", "mem^bers", "members|zzz"):
        assert tools.search(query, mode="text")["hits"] == [], query


def test_a_database_folder_named_like_a_url_is_read_as_a_local_folder(lancelot_db, make_tools, tmp_path, monkeypatch):
    import shutil

    shutil.copytree(lancelot_db, tmp_path / "file:db")
    monkeypatch.chdir(tmp_path)
    reply = make_tools("file:db").search("hiss", mode="text")
    assert reply["hits"]


def test_a_url_of_a_scheme_lancelot_does_not_read_is_refused_as_written_naming_what_is_wanted(make_tools):
    with pytest.raises(DatabaseNotFound, match=r"LANCEDB_PATH: ftp://host/db uses the scheme ftp://, which Lancelot"):
        make_tools("ftp://host/db").search("hiss")


@pytest.mark.parametrize("mode", ["text", "vector"])
def test_a_path_prefix_keeps_exactly_the_hits_under_it_at_every_depth(make_tools, lancelot_db, embedding_server, mode):
    # The prefix is applied before ranking (a range on `path`): it must keep what filtering the whole ranking keeps.
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server)
    everything = tools.search("chain air puncture tyre", mode=mode, limit=50, per_document=50)["hits"]
    for prefix in ("guide/", "guide/p", "notes", "", "zz", "guide/\U0010ffff", "é"):
        hits = tools.search("chain air puncture tyre", mode=mode, limit=50, path=prefix, per_document=50)["hits"]
        assert [hit["id"] for hit in hits] == [hit["id"] for hit in everything if hit["source"].startswith(prefix)]
