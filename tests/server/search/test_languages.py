"""A table indexed with `--language`: the server searches it with the language's index, says which language
it is in `lancedb_status`, and applies the English stop-word rule to English tables only. Tables stamped
before languages existed are English."""

from __future__ import annotations

import lance
import pytest
from tests.server import corpus
from tests.server.languages_corpus import DOCS, QUERIES

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("multilingual_db")


@pytest.fixture(scope="module")
def multilingual_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("languages")
    docs, db = corpus.write_docs(root / "docs", DOCS), root / "db"
    corpus.index(docs, db, "--table", "cjk", "--language", "cjk")
    corpus.index(docs, db, "--table", "english")
    corpus.index(docs, db, "--table", "french", "--language", "french")
    corpus.index(docs, db, "--table", "older")
    # As the indexer stamped tables before layout 3: no language.
    lance.dataset(str(db / "older.lance")).update_schema_metadata(
        {"lancelot.language": None, "lancelot.layout_version": "2"}
    )
    return db


@pytest.mark.parametrize(("query", "page"), QUERIES)
def test_a_cjk_query_finds_its_page_first_by_bm25(make_tools, multilingual_db, query, page):
    reply = make_tools(multilingual_db, LANCEDB_TABLE="cjk").search(query, mode="text")
    assert reply["textMatch"] == "bm25"
    assert reply["hits"][0]["source"] == page


def test_the_english_index_sees_no_cjk_words_and_falls_back_to_substrings(make_tools, multilingual_db):
    reply = make_tools(multilingual_db, LANCEDB_TABLE="english").search("依存関係", mode="text")
    assert reply["textMatch"] == "substring"
    assert reply["hits"][0]["source"] == "ja/packages.md"


def test_status_names_each_tables_language_and_an_older_table_is_english(make_tools, multilingual_db):
    for table, language in (("cjk", "cjk"), ("english", "english"), ("french", "french"), ("older", "english")):
        status = make_tools(multilingual_db, LANCEDB_TABLE=table).status()["table"]
        assert status["language"] == language
        assert status["fullTextIndex"] is True


def test_a_french_table_stems_french_and_keeps_its_stop_words_searchable(make_tools, multilingual_db):
    tools = make_tools(multilingual_db, LANCEDB_TABLE="french")
    assert tools.search("maison", mode="text")["hits"][0]["source"] == "fr/maisons.md"
    # "the" is a stop word only for English tables: elsewhere it is a word like any other.
    reply = tools.search("les", mode="text")
    assert reply["textMatch"] == "bm25" and reply["hits"][0]["source"] == "fr/maisons.md"
    assert make_tools(multilingual_db, LANCEDB_TABLE="english").search("the", mode="text")["hits"] == []


def test_an_older_table_answers_every_search_as_before(make_tools, multilingual_db):
    tools = make_tools(multilingual_db, LANCEDB_TABLE="older")
    assert tools.search("maisons", mode="text")["hits"][0]["source"] == "fr/maisons.md"
    assert "common" in tools.search("the", mode="text").get("note", "")
