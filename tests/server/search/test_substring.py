"""The substring match (text search when BM25 finds nothing, or the table has no full-text index): the same hits
whether its words are looked up in an n-gram index or found by a scan, the first words only, each word's first
passages only, equal scores by id, and a lost index or a rebuilt row costing no wrong hit."""

from __future__ import annotations

import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import lance
import pytest
from tests.server import corpus

from lancelot_server.search import core, substring
from lancelot_server.storage.store import describe

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("ngram_db")

QUERIES = [
    "DEC-0054",
    "dec-0054",
    "unct",
    "CHAIN recall zebra",
    "C:\\TEMP\\BIKES",
    "MEMBERS_ONLY",
    "IT'S",
    "ecor",
    "m.mbers",
    "::",
    "🚲",
    "the oil",
    "xylophone",
]
# The server serves its default table and LANCELOT_TABLES only: both of ngram_db's tables.
SERVED = {"LANCEDB_TABLE": "plain", "LANCELOT_TABLES": "looked_up"}
PATHS = [None, "guide/", "guide/chain.md", "notes/odd.txt", "nowhere/", "guid\ud7ff", "\U0010ffff"]


@pytest.fixture(scope="module")
def ngram_db(lancelot_db, tmp_path_factory):
    """`plain` (no full-text index) as `plain`, and again as `looked_up` with an n-gram index on its text."""
    db = tmp_path_factory.mktemp("ngram") / "db"
    shutil.copytree(lancelot_db / "plain.lance", db / "plain.lance")
    shutil.copytree(lancelot_db / "plain.lance", db / "looked_up.lance")
    lance.dataset(str(db / "looked_up.lance")).create_scalar_index("text", "NGRAM", name="text_ngram_idx")
    return db


@pytest.fixture
def scans(monkeypatch):
    """The words each scan of a table looked for, in order."""
    scanned: list[list[str]] = []
    scan = substring._scanned

    def spy(table, table_layout, columns, words, prefix):
        scanned.append(list(words))
        return scan(table, table_layout, columns, words, prefix)

    monkeypatch.setattr(substring, "_scanned", spy)
    return scanned


def replies(tools, query, **arguments):
    """The hits (id and score) of `query` on the scanned table and on the one with the n-gram index."""
    found = []
    for table in ("plain", "looked_up"):
        reply = tools.search(query, mode="text", table=table, **arguments)
        assert reply["textMatch"] == "substring"
        found.append([(hit["id"], hit["score"]) for hit in reply["hits"]])
    return found


@pytest.mark.parametrize("query", QUERIES)
def test_looking_words_up_in_the_n_gram_index_finds_what_a_scan_finds(ngram_db, make_tools, query):
    tools = make_tools(ngram_db, **SERVED)
    for path in PATHS:
        for limit, per_document in ((5, 1), (10, 10)):
            scanned, looked_up = replies(tools, query, path=path, limit=limit, per_document=per_document)
            assert scanned == looked_up, (query, path, limit)


def test_an_identifier_the_tokenizer_splits_and_a_part_of_a_word_are_found_without_a_scan(ngram_db, make_tools, scans):
    tools = make_tools(ngram_db, LANCEDB_TABLE="looked_up")
    assert tools.search("dec-0054", mode="text")["hits"][0]["id"] == "guide/chain.md#0"
    assert [hit["id"] for hit in tools.search("unct", mode="text")["hits"]] == ["guide/puncture.md#0"]
    assert scans == []


def test_a_long_fragment_is_found_where_it_is_whole_and_not_where_the_trigrams_looked_up_lie_apart(
    tmp_path, make_tools, scans
):
    # "ylophon" is looked up by three of its five trigrams (ylo, oph, hon); the second page holds those three
    # in other words only, and the check of the word itself leaves it out.
    db = corpus.built(
        tmp_path,
        {"music.md": "# Music\n\nShe played the Xylophone.\n", "botany.md": "# Botany\n\nXylose, ophidians, honey.\n"},
    )
    lance.dataset(str(db / "documents.lance")).create_scalar_index("text", "NGRAM", name="text_ngram_idx")
    reply = make_tools(db).search("YLOPHON", mode="text")
    assert reply["textMatch"] == "substring"
    assert [hit["source"] for hit in reply["hits"]] == ["music.md"]
    assert scans == []


def test_only_words_without_three_letters_or_digits_in_a_row_are_scanned(ngram_db, make_tools, scans):
    tools = make_tools(ngram_db, LANCEDB_TABLE="looked_up")
    assert tools.search("members :: 🚲 ab", mode="text")["hits"][0]["source"] == "notes/odd.txt"
    assert scans == [["::", "🚲", "ab"]]


def test_a_table_without_the_index_is_scanned_once_for_all_its_words(ngram_db, make_tools, scans):
    make_tools(ngram_db, LANCEDB_TABLE="plain").search("CHAIN recall zebra", mode="text")
    assert scans == [["chain", "recall", "zebra"]]


def test_a_lost_n_gram_index_costs_a_scan_not_the_search(ngram_db, make_tools, tmp_path, scans):
    db = tmp_path / "db"
    shutil.copytree(ngram_db / "looked_up.lance", db / "looked_up.lance")
    dataset = lance.dataset(str(db / "looked_up.lance"))
    (index,) = [index for index in dataset.describe_indices() if index.index_type == "NGram"]
    for segment in index.segments:
        shutil.rmtree(db / "looked_up.lance" / "_indices" / str(segment.uuid))
    reply = make_tools(db, LANCEDB_TABLE="looked_up").search("DEC-0054 unct", mode="text")
    assert {hit["id"] for hit in reply["hits"]} == {"guide/chain.md#0", "guide/puncture.md#0"}
    assert scans == [["dec-0054", "unct"]]


def test_only_the_first_eight_words_count(ngram_db, make_tools):
    tools = make_tools(ngram_db, **SERVED)
    eight = "zq1 zq2 zq3 zq4 zq5 zq6 zq7 zq8"
    for table in ("plain", "looked_up"):
        assert tools.search(f"{eight} chain", mode="text", table=table)["hits"] == []
        hits = tools.search(f"chain {eight}", mode="text", table=table)["hits"]
        assert hits[0]["score"] == pytest.approx(1 / 8 * 3 / 4)  # one word of eight, found three times


def test_a_query_of_stop_words_is_judged_on_every_word_not_the_first_eight(ngram_db, make_tools):
    reply = make_tools(ngram_db, **SERVED).search("the of and to in is it at on by chain", mode="text", table="plain")
    assert "note" not in reply and reply["hits"]


def test_each_word_counts_in_its_first_passages_only_and_they_are_scored_on_every_word(
    ngram_db, make_tools, monkeypatch
):
    monkeypatch.setattr(substring, "MAX_WORD_PASSAGES", 1)
    tools = make_tools(ngram_db, **SERVED)
    for table in ("plain", "looked_up"):
        # "the" is in five passages but counts in the first only; "glue" brings its own, scored on both words.
        hits = tools.search("the glue", mode="text", table=table, limit=10, per_document=10)["hits"]
        assert [hit["id"] for hit in hits] == ["guide/puncture.md#2", "guide/chain.md#0"], table


def test_equal_scores_come_in_the_order_of_their_ids(ngram_db, make_tools):
    tools = make_tools(ngram_db, **SERVED)
    for table in ("plain", "looked_up"):
        hits = tools.search("e", mode="text", table=table, limit=50, per_document=50)["hits"]
        assert len(hits) == 6
        assert [(-hit["score"], hit["id"]) for hit in hits] == sorted((-hit["score"], hit["id"]) for hit in hits)


def test_a_rebuild_between_the_match_and_the_read_changes_nothing_read(tmp_path, make_tools):
    docs = {"chain.md": "# Chain\n\nOil the chain.\n", "tyres.md": "# Tyres\n\nPump the tyres.\n"}
    db = corpus.built(tmp_path, docs, "--table", "plain", "--no-fts")
    pinned = make_tools(db, LANCEDB_TABLE="plain").store.table("plain").pinned()
    table_layout = describe(pinned.schema, "text", "plain")
    top = substring._best(pinned, table_layout, ["chain"], core.Wanted(5))
    corpus.write_docs(tmp_path / "docs", {"chain.md": "# Chain\n\nWax the chain instead.\n"})
    corpus.index(tmp_path / "docs", db, "--table", "plain", "--no-fts")
    assert [hit["text"] for hit in substring._read(pinned, table_layout, top)] == ["Chain\n\nOil the chain."]


def test_matches_run_on_their_own_two_threads_whatever_the_callers(ngram_db, make_tools, monkeypatch):
    seen: set[str] = set()
    best = substring._best

    def spy(*arguments):
        seen.add(threading.current_thread().name)
        return best(*arguments)

    monkeypatch.setattr(substring, "_best", spy)
    tools = make_tools(ngram_db, **SERVED)
    expected = tools.search("unct", mode="text", table="plain")["hits"]
    with ThreadPoolExecutor(8) as callers:
        found = list(callers.map(lambda _: tools.search("unct", mode="text", table="plain")["hits"], range(16)))
    assert found == [expected] * 16
    assert 1 <= len(seen) <= substring.MAX_MATCHING and all(name.startswith("lancelot-substring") for name in seen)
