"""Hybrid search, the order `auto` tries searches in, model checks, and when a query leaves the machine.

Tables are built by the real `lancelot-index --embed` against the test endpoint; the tools embed queries
through the real openai client against it too.
"""

from __future__ import annotations

import math

import pytest
from tests.server import corpus
from tests.server.conftest import endpoint_tools
from tests.support.embedding_server import EmbeddingServer

from lancelot_server.search.fusion import HYBRID_DEPTH, TEXT_WEIGHT

# One worker runs this module when the suite runs on several: the module's database and embedding endpoint, made once.
pytestmark = pytest.mark.xdist_group("designed_db")

QUERY = "reclaim dead rows"

# One chunk per file. BM25 ranks `keywords.txt` first (the query's words, some twice, in a short text);
# the designed vectors below rank `neighbour.txt` first. `answer.txt` is second in both lists, and the
# only passage that really answers the question: hybrid search must put it first.
DESIGNED_DOCS = {
    "answer.txt": "VACUUM can reclaim the storage held by dead rows, so that the table stops growing after "
    "many updates and deletes; run it regularly or let the autovacuum daemon do it for you.",
    "keywords.txt": "Dead rows to reclaim: rows, rows.",
    "neighbour.txt": "Routine maintenance keeps a database healthy over the years.",
    "filler1.txt": "Backups are taken with pg_dump and restored with pg_restore.",
    "filler2.txt": "The planner estimates the cost of each join order.",
}
# Direction of each text's vector, by a word only it holds; the query points along x.
DIRECTIONS = {
    QUERY: (1.0, 0.0),
    "Routine": (1.0, 0.05),
    "VACUUM": (1.0, 0.3),
    "pg_dump": (1.0, 0.6),
    "planner": (1.0, 1.0),
    "Dead": (0.0, 1.0),
}


def designed(texts, _model):
    vectors = []
    for text in texts:
        x, y = next(direction for marker, direction in DIRECTIONS.items() if marker in text)
        norm = math.hypot(x, y)
        vectors.append([x / norm, y / norm, 0.0, 0.0])
    return vectors


@pytest.fixture(scope="module")
def designed_endpoint():
    with EmbeddingServer(models={"designed": 4}, embed=designed) as server:
        yield server


@pytest.fixture(scope="module")
def designed_db(tmp_path_factory, designed_endpoint):
    root = tmp_path_factory.mktemp("designed")
    docs, db = corpus.write_docs(root / "docs", DESIGNED_DOCS), root / "db"
    env = {"OPENAI_BASE_URL": designed_endpoint.url, "OPENAI_API_KEY": "sk-test", "EMBEDDING_MODEL": "designed"}
    corpus.index(docs, db, "--embed", env=env)
    return db


def sources(reply):
    return [hit["source"] for hit in reply["hits"]]


def test_hybrid_puts_first_what_both_lists_rank_well(designed_db, designed_endpoint, make_tools):
    tools = endpoint_tools(make_tools, designed_db, designed_endpoint, table="documents", model="designed")
    text, vector = tools.search(QUERY, mode="text"), tools.search(QUERY, mode="vector")
    assert sources(text)[:2] == ["keywords.txt", "answer.txt"] and text["textMatch"] == "bm25"
    assert sources(vector)[:2] == ["neighbour.txt", "answer.txt"]
    hybrid = tools.search(QUERY, mode="hybrid")
    assert (hybrid["searchType"], hybrid["textMatch"]) == ("hybrid", "bm25") and "note" not in hybrid
    assert sources(hybrid)[0] == "answer.txt"


def test_hybrid_order_and_scores_are_the_fusion_of_the_two_lists(designed_db, designed_endpoint, make_tools):
    tools = endpoint_tools(make_tools, designed_db, designed_endpoint, table="documents", model="designed")
    text = tools.search(QUERY, mode="text", limit=HYBRID_DEPTH)["hits"]
    vector = tools.search(QUERY, mode="vector", limit=HYBRID_DEPTH)["hits"]
    assert len(text) < HYBRID_DEPTH  # every match listed: text scores are scaled from 0
    best_bm25 = text[0]["score"]
    nearest, farthest = vector[0]["score"], vector[-1]["score"]
    expected: dict[str, float] = {}
    for hit in text:
        expected[hit["id"]] = TEXT_WEIGHT * hit["score"] / best_bm25
    for hit in vector:
        share = (farthest - hit["score"]) / (farthest - nearest)
        expected[hit["id"]] = expected.get(hit["id"], 0.0) + (1 - TEXT_WEIGHT) * share
    hybrid = tools.search(QUERY, mode="hybrid", limit=4)["hits"]
    best_four = sorted(expected, key=lambda ident: -expected[ident])[:4]
    assert [hit["id"] for hit in hybrid] == best_four
    assert [hit["score"] for hit in hybrid] == [round(expected[ident], 6) for ident in best_four]
    assert hybrid[0]["id"] == "answer.txt#0" and 0 < hybrid[-1]["score"] < hybrid[0]["score"] <= 1


def test_auto_prefers_hybrid_when_everything_is_there(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-8")
    reply = tools.search("escaping air")
    assert (reply["mode"], reply["searchType"], reply["textMatch"]) == ("auto", "hybrid", "bm25")
    assert "note" not in reply and reply["hits"][0]["source"] == "guide/puncture.md"
    assert [r.inputs for r in embedding_server.requests] == [("escaping air",)]


def test_auto_without_a_full_text_index_runs_vector_search_and_says_why(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded_plain", model="test-8")
    for mode in ("auto", "hybrid"):
        reply = tools.search("escaping air", mode=mode)
        assert reply["searchType"] == "vector" and reply["hits"]
        assert reply["note"].startswith("hybrid search needs a full-text index")


@pytest.mark.parametrize("mode", ["auto", "hybrid", "vector"])
def test_another_model_than_the_tables_falls_back_to_text_naming_both_and_sends_nothing(
    lancelot_db, embedding_server, make_tools, mode
):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="text-embedding-3-small")
    reply = tools.search("escaping air", mode=mode)
    assert (reply["searchType"], reply["textMatch"]) == ("text", "bm25") and reply["hits"]
    assert "test-8 (width 8)" in reply["note"] and "text-embedding-3-small" in reply["note"]
    assert embedding_server.requests == []


def test_an_anythingllm_table_of_another_width_falls_back_with_both_widths(lancelot_db, embedding_server, make_tools):
    # Nothing stamped: the width is only known once the query is embedded.
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="workspace", model="text-embedding-3-small")
    reply = tools.search("hiss")
    assert reply["searchType"] == "text" and reply["hits"]
    assert "width 1536" in reply["note"] and "width 384" in reply["note"]


def test_text_search_never_sends_the_query_anywhere(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-8")
    tools.search("escaping air", mode="text")
    tools.query("escaping air", mode="text")
    tools.status()
    assert embedding_server.requests == []


def test_a_local_endpoint_needs_no_key(lancelot_db, make_tools):
    with EmbeddingServer(api_key=None) as local:
        tools = make_tools(lancelot_db, LANCEDB_TABLE="embedded", OPENAI_BASE_URL=local.url, EMBEDDING_MODEL="test-8")
        reply = tools.search("escaping air")
        status = tools.status()
    assert reply["searchType"] == "hybrid" and len(local.requests) == 1
    assert status["searchTypes"] == ["text", "vector", "hybrid"] and status["embedding"]["apiKey"] is False


def test_status_lists_hybrid_and_the_endpoint_only_when_hybrid_can_run(lancelot_db, embedding_server, make_tools):
    status = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-8").status()
    assert status["searchTypes"] == ["text", "vector", "hybrid"] and "note" not in status["embedding"]
    assert status["embedding"]["endpoint"] == f"127.0.0.1:{embedding_server.port}"
    assert status["table"]["metadata"]["embedding_model"] == "test-8"
    plain = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded_plain", model="test-8").status()
    assert plain["searchTypes"] == ["text", "vector"]
    other = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-16").status()
    assert other["searchTypes"] == ["text"] and "test-8" in other["embedding"]["note"]
    assert embedding_server.requests == []


def test_hybrid_keeps_only_hits_under_the_path_and_renders_as_markdown(lancelot_db, embedding_server, make_tools):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server, table="embedded", model="test-8")
    reply = tools.search("chain links", mode="hybrid", path="guide/", limit=10)
    assert reply["searchType"] == "hybrid" and reply["hits"]
    assert all(hit["source"].startswith("guide/") for hit in reply["hits"])
    assert reply["hits"][0]["source"] == "guide/chain.md"
    text = tools.query("chain links", mode="hybrid")
    assert "- search type: hybrid (bm25)" in text and "Source: guide/chain.md" in text
