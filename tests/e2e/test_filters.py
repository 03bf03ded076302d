"""Filters by tags, dates and file types through the real server over real stdio and real HTTP with the MCP SDK's
client, in text, vector and hybrid search (vectors from the embedding endpoint of the tests); arguments that
do not fit are tool errors naming them; hostile values match literally and change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.architecture.test_read_only import fingerprint
from tests.e2e.test_read import TRANSPORTS
from tests.server import corpus, metadata_corpus
from tests.server.metadata_corpus import DEEP, QUERY, SETUP, SINCE_2024, endpoint, environ

# One worker runs this module when the suite runs on several: the module's database and embedding endpoint, made once.
pytestmark = pytest.mark.xdist_group("e2e_filters_db")

__all__ = ["endpoint"]  # the module's embedding endpoint, a fixture

# Each database's files as the indexer left them: the shared stdio server has served earlier tests by the
# time a test compares, and nothing it did may have changed them either.
BUILT: dict[Path, dict[str, str]] = {}


@pytest.fixture(scope="module")
def filters_db(tmp_path_factory, endpoint):
    root = tmp_path_factory.mktemp("filters-e2e")
    docs = metadata_corpus.write(root / "docs", metadata_corpus.deep_docs())
    db = root / "db"
    corpus.index(docs, db, "--embed", env=environ(endpoint))
    BUILT[db] = fingerprint(db)
    return db


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_filters_through_the_real_server_in_every_mode(filters_db, endpoint, servers, transport):
    asked = {
        "setup": {"query": QUERY, "limit": 50, "tags": ["Setup"]},
        "both": {"query": QUERY, "limit": 50, "tags": ["setup", "linux"], "tagMatch": "all"},
        "dated": {"query": QUERY, "limit": 50, "since": "2024", "until": "2024-12"},
        "typed": {"query": QUERY, "limit": 50, "types": ["pdf", "docx"], "path": "rep"},
        "deep": {"query": "sprocket chain", "limit": 3, "tags": ["deep"]},
    }

    async def session(client):
        replies = {}
        for mode in ("text", "vector", "hybrid"):
            for name, arguments in asked.items():
                result = await client.call_tool("lancedb_search", {**arguments, "mode": mode})
                assert not result.is_error, result.content[0].text
                replies[mode, name] = result.structured_content
        listed = await client.call_tool("lancedb_query", {"query": QUERY, "mode": "hybrid", "types": ["html"]})
        narrowed = {"tags": ["Setup"], "tagMatch": "all", "since": "2020", "until": "2030-06", "path": "guide/"}
        told = await client.call_tool("lancedb_query", {"query": QUERY, "mode": "text", **narrowed})
        bare = await client.call_tool("lancedb_query", {"query": QUERY, "mode": "text"})
        return replies, listed.content[0].text, told.content[0].text, bare.content[0].text

    replies, listed, told, bare = servers.over(transport, filters_db, session, **environ(endpoint))
    for mode in ("text", "vector", "hybrid"):
        sources = {name: {hit["source"] for hit in replies[mode, name]["hits"]} for name in asked}
        assert all(replies[mode, name]["searchType"] == mode for name in asked), mode
        assert sources == {
            "setup": SETUP,
            "both": {"guide/install.md"},
            "dated": SINCE_2024,
            "typed": {"report.docx"},
            "deep": DEEP,
        }, mode
    hit = next(hit for hit in replies["text", "setup"]["hits"] if hit["source"] == "guide/install.md")
    assert hit["metadata"]["tags"] == ["Setup", "Linux"] and hit["metadata"]["author"] == "Ann"
    assert "web/page.html" in listed and "guide/install.md" not in listed
    # The Markdown header says what narrowed the passages; without a filter it says nothing of filters.
    assert f'- query: {QUERY}\n- filters: types ["html"]\n' in listed
    assert '- filters: tags ["setup"] (tagMatch all) · since 2020-01-01 · until 2030-06-30 · path "guide/"\n' in told
    assert "guide/install.md" in told and "- filters" not in bare


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"since": "2024-13-01"}, "since: Input should be a date, YYYY-MM-DD, YYYY-MM or YYYY: there is no such month"),
        ({"until": "last week"}, "until: Input should be a date, YYYY-MM-DD, YYYY-MM or YYYY: not a date"),
        ({"types": ["exe"]}, "types[0]: Input should be 'docx', 'html', 'md', 'pdf', 'rst' or 'txt'"),
        ({"tags": "setup"}, "tags: Input should be a valid list"),
        ({"tags": [""]}, "tags[0]: String should have at least 1 character"),
        ({"tagMatch": "some"}, "tagMatch: Input should be 'any' or 'all'"),
        ({"since": "2024-05", "until": "2024-04"}, "since (2024-05) is after until (2024-04)"),
        ({"tags": [" \x1f "]}, "tags[0] holds nothing to match"),
    ],
)
def test_filter_arguments_that_do_not_fit_are_tool_errors_naming_them(filters_db, servers, arguments, message):
    async def session(client):
        search = await client.call_tool("lancedb_search", {"query": QUERY, **arguments})
        query = await client.call_tool("lancedb_query", {"query": QUERY, **arguments})
        return search, query

    for result in servers.over("stdio", filters_db, session):
        assert result.is_error and message in result.content[0].text, result.content[0].text


def test_hostile_filter_values_match_literally_and_change_nothing(filters_db, servers):
    hostile = [*metadata_corpus.HOSTILE_TAGS, "%%", "_", "' OR 1=1 --", "x\x00y", "\u202esetup", "ü" * 200]

    async def session(client):
        found = {}
        for tag in hostile:
            result = await client.call_tool("lancedb_search", {"query": QUERY, "mode": "text", "tags": [tag]})
            assert not result.is_error, result.content[0].text
            found[tag] = {hit["source"] for hit in result.structured_content["hits"]}
        return found

    found = servers.over("stdio", filters_db, session)
    for tag in metadata_corpus.HOSTILE_TAGS:
        assert found[tag] == {"hostile.md"}, tag
    assert all(found[tag] == set() for tag in hostile[len(metadata_corpus.HOSTILE_TAGS) :])
    assert fingerprint(filters_db) == BUILT[filters_db]
