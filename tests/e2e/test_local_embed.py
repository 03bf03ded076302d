"""A table indexed with `--embed local`, searched by meaning through the real server over real stdio with the
MCP SDK's client: no API key, no endpoint, the query embedded by the same model run in the server."""

from __future__ import annotations

from tests.server import corpus
from tests.server.local_corpus import DOCS, QUERIES


def test_vector_and_hybrid_search_over_stdio_find_answers_by_meaning(tmp_path, local_model, servers):
    db = tmp_path / "db"
    corpus.index(corpus.write_docs(tmp_path / "docs", DOCS), db, "--embed", f"local:{local_model}")

    async def session(client):
        found = []
        for query, _answer in QUERIES:
            for mode in ("vector", "hybrid"):
                result = await client.call_tool("lancedb_search", {"query": query, "mode": mode, "limit": 2})
                assert not result.is_error, result.content[0].text
                found.append(result.structured_content)
        return found

    replies = servers.over("stdio", db, session, LANCELOT_EMBED_MODEL_PATH=str(local_model))
    expected = [(mode, answer) for _query, answer in QUERIES for mode in ("vector", "hybrid")]
    assert [(reply["searchType"], reply["hits"][0]["source"]) for reply in replies] == expected
    assert all("note" not in reply for reply in replies)
