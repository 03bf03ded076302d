"""Several phrasings in one search (`queries`): each searched as one query is, fused by relative score, each hit
naming the phrasings that found it; over a small table the real indexer built, and the test embedding endpoint."""

from __future__ import annotations

import pytest
from tests.server import corpus
from tests.server.conftest import endpoint_tools

from lancelot_server.errors import InvalidRequest
from lancelot_server.search.fusion import HYBRID_DEPTH
from lancelot_server.search.modes import Query
from lancelot_server.tools import MAX_QUERIES

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("phrasings_db")

# "dead rows" ranks dead.txt, then vacuum.txt; "vacuum storage" ranks vacuum.txt, then storage.txt: only
# vacuum.txt is found by both, and the fused list must put it first.
DOCS = {
    "dead.txt": "Dead rows pile up in a busy table: dead rows, more dead rows.",
    "vacuum.txt": "VACUUM reclaims the storage held by dead rows after many updates and deletes.",
    "storage.txt": "Storage parameters of a table: the fill factor and the storage of long values.",
    "backup.txt": "Backups are taken with pg_dump and restored with pg_restore.",
    "guide/dead.md": "# Dead rows\n\nDead rows are what an update leaves.\n\n## More\n\nDead rows again, dead.\n",
}
A, B = "dead rows", "vacuum storage"


@pytest.fixture(scope="module")
def phrasings_db(tmp_path_factory):
    return corpus.built(tmp_path_factory.mktemp("phrasings"), DOCS)


def sources(reply):
    return [hit["source"] for hit in reply["hits"]]


def test_the_fused_list_is_the_equal_weighted_sum_of_each_phrasings_scaled_scores(phrasings_db, make_tools):
    tools = make_tools(phrasings_db)
    lists = [tools.search(text, mode="text", limit=HYBRID_DEPTH)["hits"] for text in (A, B)]
    expected: dict[str, float] = {}
    finders: dict[str, list[int]] = {}
    for position, hits in enumerate(lists):
        for hit in hits:
            share = hit["score"] / hits[0]["score"] / 2  # BM25 scaled from 0, each phrasing weighing a half
            expected[hit["source"]] = expected.get(hit["source"], 0.0) + share
            finders.setdefault(hit["source"], []).append(position)
    reply = tools.search(queries=[A, B], mode="text", limit=4)
    best = sorted(expected, key=lambda source: -expected[source])[:4]
    assert sources(reply) == best and best[0] == "vacuum.txt"
    assert [hit["score"] for hit in reply["hits"]] == [round(expected[source], 6) for source in best]
    assert [hit["queries"] for hit in reply["hits"]] == [finders[source] for source in best]
    assert reply["hits"][0]["queries"] == [0, 1] and reply["queries"] == [A, B] and "query" not in reply
    assert (reply["searchType"], reply["textMatch"], reply["count"]) == ("text", "bm25", 4)


def test_one_query_has_no_attribution_and_one_phrasing_in_queries_has_it(phrasings_db, make_tools):
    tools = make_tools(phrasings_db)
    alone, listed = tools.search(A, mode="text"), tools.search(queries=[A], mode="text")
    assert "queries" not in alone and all("queries" not in hit for hit in alone["hits"])
    assert sources(listed) == sources(alone) and all(hit["queries"] == [0] for hit in listed["hits"])
    assert listed["hits"][0]["score"] == 1.0  # the best hit of the one list, scaled


def test_one_passage_per_document_fuses_documents_and_a_higher_cap_fuses_passages(phrasings_db, make_tools):
    tools = make_tools(phrasings_db)
    pages = tools.search(queries=[A, "dead"], mode="text", limit=10)
    assert len(sources(pages)) == len(set(sources(pages)))
    passages = tools.search(queries=[A, "dead"], mode="text", limit=10, per_document=2)
    assert sources(passages).count("guide/dead.md") == 2
    ids = [hit["id"] for hit in passages["hits"]]
    assert len(ids) == len(set(ids))


def test_path_and_filters_apply_to_every_phrasing(phrasings_db, make_tools):
    tools = make_tools(phrasings_db)
    reply = tools.search(queries=[A, B], mode="text", path="guide/")
    assert sources(reply) == ["guide/dead.md"] and reply["hits"][0]["queries"] == [0]


def test_a_phrasing_that_needs_a_note_is_named_and_the_others_still_search(phrasings_db, make_tools):
    tools = make_tools(phrasings_db)
    reply = tools.search(queries=[B, "the of and"], mode="text")
    assert reply["note"].startswith("Phrasing 1: the query holds only words so common")
    assert sources(reply)[0] == "vacuum.txt" and all(hit["queries"] == [0] for hit in reply["hits"])


def test_the_markdown_names_the_phrasings_and_who_found_each_passage(phrasings_db, make_tools):
    block = make_tools(phrasings_db).query(queries=[A, B], mode="text")
    assert "- queries: [0] dead rows; [1] vacuum storage\n" in block
    assert "Source: vacuum.txt" in block and "Found by queries: 0, 1\n" in block
    assert "Found by queries: 1\n" in block and "- query:" not in block


def test_several_tables_fuse_phrasings_in_each_and_merge_by_rank(phrasings_db, make_tools, tmp_path):
    tools = make_tools(phrasings_db, LANCELOT_TABLES="documents,plain")
    corpus.index(corpus.write_docs(tmp_path / "docs", DOCS), phrasings_db, "--table", "plain", "--no-fts")
    reply = tools.search(queries=[A, B], mode="text", table=["documents", "plain"])
    assert [one["textMatch"] for one in reply["tables"]] == ["bm25", "substring"]
    assert {hit["table"] for hit in reply["hits"]} == {"documents", "plain"}
    assert all(hit["queries"] for hit in reply["hits"])


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_vector_and_hybrid_embed_every_phrasing_in_one_request(lancelot_db, embedding_server, make_tools, mode):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server)
    reply = tools.search(queries=["escaping air", "chain degreaser"], mode=mode)
    assert reply["searchType"] == mode and "note" not in reply
    assert [request.inputs for request in embedding_server.requests] == [("escaping air", "chain degreaser")]
    assert {hit["source"] for hit in reply["hits"][:2]} == {"guide/puncture.md", "guide/chain.md"}


def test_phrasings_of_one_search_are_embedded_once_together(embedding_server, make_tools, lancelot_db):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server)
    first, second = Query.several(["one", "two"], tools.embedder)
    assert len(second.embedding()) == 8 and len(first.embedding()) == 8
    assert [request.inputs for request in embedding_server.requests] == [("one", "two")]


@pytest.mark.parametrize(
    ("query", "queries", "words"),
    [
        ("chain", ["chain"], ["not both"]),
        (None, None, ["Nothing to search for", "Pass query", "or queries"]),
        (None, [], ["queries is empty", "1 to 5 phrasings"]),
        (None, ["a", "b", "c", "d", "e", "f"], ["6 phrasings", f"limit is {MAX_QUERIES}", "differ most"]),
        (None, ["dead", "rows", " dead"], ["queries[2] repeats queries[0]", "reword"]),
        (None, ["dead", " \t"], ["queries[1] is empty"]),
        (None, ["x" * 2001], ["queries[0] has 2,001 characters", "Shorten"]),
        ("  ", None, ["The query is empty"]),
    ],
)
def test_the_tool_refuses_what_the_schema_cannot_say(phrasings_db, make_tools, query, queries, words):
    with pytest.raises(InvalidRequest) as refused:
        make_tools(phrasings_db).search(query, mode="text", queries=queries)
    for word in words:
        assert word in str(refused.value)
