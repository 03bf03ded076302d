"""At most `perDocument` passages of one document per reply, from pools deep enough that the cap never
shortens a reply while other documents still match, in every search type; equal scores in a fixed order."""

from __future__ import annotations

from collections import Counter

import pytest
from tests.server import corpus
from tests.server.conftest import endpoint_tools

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("crowded_db")


@pytest.fixture(scope="module")
def crowded_db(tmp_path_factory):
    """One page of 300 passages that all say "sprocket" many times, and six pages that say it once."""
    root = tmp_path_factory.mktemp("crowded")
    long = "\n\n".join(f"## Part {n}\n\nSprocket sprocket sprocket: the sprocket of part {n}." for n in range(300))
    docs = {"long.md": f"# Sprockets\n\n{long}\n"}
    docs |= {
        f"short{n}.md": f"# Short {n}\n\nA page that names the sprocket once, among other words {n}.\n"
        for n in range(6)
    }
    docs["tie-a.md"] = "# Same\n\nIdentical words about a derailleur hanger.\n"
    docs["tie-b.md"] = "# Same\n\nIdentical words about a derailleur hanger.\n"
    db = root / "db"
    written = corpus.write_docs(root / "docs", docs)
    corpus.index(written, db)
    corpus.index(written, db, "--table", "plain", "--no-fts")
    return db


def sources(reply):
    return [hit["source"] for hit in reply["hits"]]


@pytest.mark.parametrize(("table", "match"), [("documents", "bm25"), ("plain", "substring")])
def test_the_cap_keeps_one_page_from_crowding_out_the_others(crowded_db, make_tools, table, match):
    tools = make_tools(crowded_db, LANCELOT_TABLES="plain")
    reply = tools.search("sprocket", mode="text", limit=8, table=table, per_document=2)
    assert reply["textMatch"] == match
    counts = Counter(sources(reply))
    assert counts["long.md"] == 2 and len(reply["hits"]) == 8
    assert {f"short{n}.md" for n in range(6)} <= set(counts)


@pytest.mark.parametrize("table", ["documents", "plain"])
def test_the_default_cap_of_one_still_fills_the_reply_from_deep_in_the_ranking(crowded_db, make_tools, table):
    # The first 50, 200 and 800 ranked passages are nearly all from long.md: the pool must deepen.
    reply = make_tools(crowded_db, LANCELOT_TABLES="plain").search("sprocket", mode="text", limit=7, table=table)
    assert len(reply["hits"]) == 7 and len(set(sources(reply))) == 7


def test_raising_the_cap_gives_several_passages_of_one_page(crowded_db, make_tools):
    reply = make_tools(crowded_db).search("sprocket", mode="text", limit=10, per_document=50)
    assert sources(reply) == ["long.md"] * 10


def test_the_cap_applies_with_a_path_prefix_too(crowded_db, make_tools):
    reply = make_tools(crowded_db).search("sprocket", mode="text", limit=5, path="short", per_document=1)
    assert len(set(sources(reply))) == 5 and all(source.startswith("short") for source in sources(reply))


def test_equal_scores_come_in_id_order_every_time(crowded_db, make_tools):
    tools = make_tools(crowded_db, LANCELOT_TABLES="plain")
    for table in ("documents", "plain"):
        orders = {tuple(sources(tools.search("derailleur hanger", mode="text", table=table))) for _ in range(5)}
        assert orders == {("tie-a.md", "tie-b.md")}


def chains(tmp_path, make_tools, embedding_server):
    """Tools over an embedded table: one page of 80 passages on chains, four pages that mention a chain once."""
    docs = {"long.md": "# Chains\n\n" + "\n\n".join(f"## Link {n}\n\nChain link {n} wears." for n in range(80))}
    docs |= {f"other{n}.md": f"# Other {n}\n\nA chain is mentioned here, page {n}.\n" for n in range(4)}
    env = {"OPENAI_BASE_URL": embedding_server.url, "OPENAI_API_KEY": "sk-test", "EMBEDDING_MODEL": "test-8"}
    corpus.index(corpus.write_docs(tmp_path / "docs", docs), tmp_path / "db", "--embed", env=env)
    return endpoint_tools(make_tools, tmp_path / "db", embedding_server, table="documents")


def test_hybrid_fuses_uncapped_lists_and_caps_the_fused_ranking(tmp_path, make_tools, embedding_server):
    tools = chains(tmp_path, make_tools, embedding_server)
    reply = tools.search("chain", mode="hybrid", limit=6, per_document=2)
    assert reply["searchType"] == "hybrid" and len(reply["hits"]) == 6
    assert Counter(sources(reply))["long.md"] == 2
    scores = [hit["score"] for hit in reply["hits"]]
    assert scores == sorted(scores, reverse=True)


def test_hybrid_with_one_passage_per_page_ranks_pages_and_fills_the_reply(tmp_path, make_tools, embedding_server):
    tools = chains(tmp_path, make_tools, embedding_server)
    reply = tools.search("chain", mode="hybrid", limit=5)
    assert reply["searchType"] == "hybrid"
    assert sorted(sources(reply)) == ["long.md", "other0.md", "other1.md", "other2.md", "other3.md"]


def test_per_document_out_of_range_is_refused(crowded_db, make_tools):
    from lancelot_server.errors import InvalidRequest

    with pytest.raises(InvalidRequest, match="perDocument must be between 1 and 50; got 0"):
        make_tools(crowded_db).search("sprocket", per_document=0)


def _hit(source, number, score):
    return {"id": f"{source}#{number}", "title": None, "source": source, "heading": None, "text": "", "score": score,
            "metadata": {}}  # fmt: skip


def test_with_one_passage_per_page_a_pages_two_best_passages_fuse_and_outrank_a_page_both_lists_rank_second():
    from lancelot_server.search.fusion import TEXT_WEIGHT, fused_ranking

    # Page a: passage 1 first in text search (BM25 5), passage 2 first in vector search (distance 0.1).
    # Page b: second in both (BM25 4, distance 0.3); page c only in vector search, between them (0.2).
    matched = [_hit("a.md", 1, 5.0), _hit("b.md", 0, 4.0)]
    nearest = [_hit("a.md", 2, 0.1), _hit("c.md", 0, 0.2), _hit("b.md", 0, 0.3)]
    pages = fused_ranking(matched, nearest, 1, 5, every_match=True)
    vector_weight = 1 - TEXT_WEIGHT
    assert [(hit["id"], score) for hit, score in pages] == [
        ("a.md#1", pytest.approx(1.0)),  # shown by its text-search passage
        ("b.md#0", pytest.approx(TEXT_WEIGHT * 4 / 5)),  # the text list holds every match: scaled from 0
        ("c.md#0", pytest.approx(vector_weight * 0.5)),
    ]
    # Without every match listed, the text list's last hit is its floor: b keeps only what vectors give it.
    assert [hit["id"] for hit, _ in fused_ranking(matched, nearest, 1, 5)] == ["a.md#1", "c.md#0", "b.md#0"]
    # Fusing passages instead, each of a's passages counts in one list only: neither gets the page's 1.0.
    passages = fused_ranking(matched, nearest, 2, 5, every_match=True)
    expected = {
        "a.md#1": TEXT_WEIGHT,
        "a.md#2": vector_weight,
        "b.md#0": TEXT_WEIGHT * 4 / 5,
        "c.md#0": vector_weight * 0.5,
    }
    assert [(hit["id"], score) for hit, score in passages] == [
        (ident, pytest.approx(expected[ident])) for ident in sorted(expected, key=lambda ident: -expected[ident])
    ]
