"""A table indexed with `--language cjk`, searched and read in Japanese, Chinese and Korean through the real
server over real stdio and real HTTP with the MCP SDK's client."""

from __future__ import annotations

import pytest
from tests.e2e.test_read import TRANSPORTS
from tests.server import corpus
from tests.server.languages_corpus import DOCS, QUERIES

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("cjk_db")


@pytest.fixture(scope="module")
def cjk_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("cjk")
    docs, db = corpus.write_docs(root / "docs", DOCS), root / "db"
    corpus.index(docs, db, "--language", "cjk")
    return db


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cjk_queries_find_their_pages_and_the_hit_reads_on(cjk_db, servers, transport):
    async def session(client):
        status = (await client.call_tool("lancedb_status", {})).structured_content
        replies = []
        for query, _page in QUERIES:
            result = await client.call_tool("lancedb_search", {"query": query, "limit": 3})
            assert not result.is_error, result.content[0].text
            replies.append(result.structured_content)
        read = await client.call_tool("lancedb_read", {"id": replies[1]["hits"][0]["id"], "after": 0, "before": 0})
        listed = await client.call_tool("lancedb_query", {"query": "依赖关系", "limit": 1})
        return status, replies, read.structured_content, listed.content[0].text

    status, replies, read, listed = servers.over(transport, cjk_db, session)
    assert status["table"]["language"] == "cjk"
    for (query, page), reply in zip(QUERIES, replies, strict=True):
        assert reply["textMatch"] == "bm25", query
        assert reply["hits"][0]["source"] == page, query
    assert "固定アドレス" in read["passages"][0]["text"]
    assert "zh/packages.md" in listed and "依赖关系" in listed
