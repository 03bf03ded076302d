"""Filters by tags, dates and file types over tables the real indexer built, in every search mode, with the
embedding endpoint of the tests for vector and hybrid; each hit's metadata; hostile values; old tables."""

from __future__ import annotations

import shutil
import time

import lance
import pytest
from tests.server import corpus, metadata_corpus
from tests.server.conftest import endpoint_tools
from tests.server.metadata_corpus import DEEP, EVERY, LINUX, QUERY, SETUP, SINCE_2024, UNTIL_2023, endpoint, environ
from tests.server.test_app import call, session

from lancelot_schema import layout
from lancelot_server.errors import InvalidRequest
from lancelot_server.search import substring
from lancelot_server.search.filters import MAX_TAGS, NONE_KEPT, Filters
from lancelot_server.tools import MAX_LIMIT

# One worker runs this module when the suite runs on several: the module's database and embedding endpoint, made once.
pytestmark = pytest.mark.xdist_group("filters_db")

MODES = ["text", "vector", "hybrid"]
__all__ = ["endpoint"]  # the module's embedding endpoint, a fixture


@pytest.fixture(scope="module")
def filters_db(tmp_path_factory, endpoint):
    """`documents`: the metadata corpus with vectors from the endpoint; `deep`: the same with the deep pages;
    `old`: `documents` as layout 4 wrote it (no metadata columns); `looked_up`: `documents` with an n-gram index
    on its text (the substring match looks words up in it rather than scanning)."""
    root = tmp_path_factory.mktemp("filters")
    docs, db = metadata_corpus.write(root / "docs"), root / "db"
    corpus.index(docs, db, "--embed", env=environ(endpoint))
    deep = metadata_corpus.write(root / "deep", metadata_corpus.deep_docs())
    corpus.index(deep, db, "--table", "deep", "--embed", env=environ(endpoint))
    table = lance.dataset(str(db / "documents.lance")).to_table()
    old = table.drop_columns([layout.PAGE, layout.META, layout.TAGS, layout.DATE, layout.FILE_TYPE])
    lance.write_dataset(old, str(db / "old.lance"))
    shutil.copytree(db / "documents.lance", db / "looked_up.lance")
    lance.dataset(str(db / "looked_up.lance")).create_scalar_index("text", "NGRAM", name="text_ngram_idx")
    corpus.anythingllm_table(db)
    return db


@pytest.fixture
def tools(filters_db, endpoint, make_tools):
    return endpoint_tools(make_tools, filters_db, endpoint, table="documents")


def found(tools, mode="text", query=QUERY, limit=MAX_LIMIT, **filters):
    reply = tools.search(query, mode=mode, limit=limit, filters=Filters.of(**filters))
    # Text search says so when no document has what the filters ask for (and looks no further).
    expected = NONE_KEPT if mode != "vector" and not reply["hits"] else None
    assert reply["searchType"] == mode and reply.get("note") == expected, reply.get("note")
    return {hit["source"] for hit in reply["hits"]}


@pytest.mark.parametrize("mode", MODES)
def test_every_filter_keeps_exactly_the_documents_it_names_in_every_mode(tools, mode):
    assert found(tools, mode) == EVERY
    assert found(tools, mode, tags=["setup"]) == SETUP
    assert found(tools, mode, tags=["LINUX"]) == LINUX  # any case
    assert found(tools, mode, tags=["setup", "linux"]) == SETUP | LINUX
    assert found(tools, mode, tags=["setup", "linux"], tag_match="all") == {"guide/install.md"}
    assert found(tools, mode, since="2024") == SINCE_2024
    assert found(tools, mode, until="2023") == UNTIL_2023
    assert found(tools, mode, types=["pdf", "docx"]) == {"manual.pdf", "report.docx"}
    combined = found(tools, mode, tags=["setup"], since="2024-01", until="2024-06-30", types=["md", "html"])
    assert combined == {"guide/install.md", "guide/upgrade.md", "web/page.html"}


def test_dates_are_inclusive_and_a_partial_date_covers_its_whole_month_or_year(tools):
    assert found(tools, since="2024-02-29", until="2024-02") == {"web/page.html"}
    assert found(tools, since="2024-01-11", until="2024-06-29") == {"web/page.html", "manual.pdf"}
    assert found(tools, since="2024-06-30") == {"guide/upgrade.md"}
    assert found(tools, until="2022-12-31") == {"report.docx"}  # created 23:00 UTC on the 31st
    assert found(tools, since="2025") == set()


def test_odd_front_matter_numbers_are_tags_and_its_invalid_date_leaves_it_undated(tools):
    assert found(tools, tags=["3"]) == found(tools, tags=["2024"]) == {"notes/odd.md"}
    assert found(tools, since="0001", until="9999") == SINCE_2024 | UNTIL_2023  # every dated document


def test_filters_combine_with_the_path_prefix_and_the_per_document_cap(tools):
    assert found(tools, tags=["setup"], query="sprocket lockring") == SETUP
    reply = tools.search(QUERY, mode="text", limit=10, path="guide/", filters=Filters.of(tags=["setup"]))
    assert {hit["source"] for hit in reply["hits"]} == {"guide/install.md", "guide/upgrade.md"}
    reply = tools.search(QUERY, mode="text", limit=10, path="notes/", filters=Filters.of(since="2024"))
    assert reply["hits"] == []


@pytest.mark.parametrize("table", ["documents", "looked_up"])
def test_substring_matches_are_filtered_too_whether_scanned_or_looked_up(filters_db, make_tools, monkeypatch, table):
    scanned: list[list[str]] = []
    scan = substring._scanned
    monkeypatch.setattr(substring, "_scanned", lambda *arguments: scanned.append(arguments[3]) or scan(*arguments))
    tools = make_tools(filters_db, LANCEDB_TABLE=table)
    for word in ("procke", "PROCKET"):
        reply = tools.search(word, mode="text", limit=MAX_LIMIT, filters=Filters.of(tags=["linux"]))
        assert reply["textMatch"] == "substring"
        assert {hit["source"] for hit in reply["hits"]} == LINUX
        reply = tools.search(word, mode="text", limit=MAX_LIMIT, filters=Filters.of(since="2024", types=["md"]))
        assert {hit["source"] for hit in reply["hits"]} == {"guide/install.md", "guide/upgrade.md"}
    assert bool(scanned) == (table == "documents")


@pytest.mark.parametrize("mode", MODES)
def test_a_filter_that_keeps_only_deep_documents_still_fills_the_reply(filters_db, endpoint, make_tools, mode):
    tools = endpoint_tools(make_tools, filters_db, endpoint, table="deep")
    query = "sprocket chain"
    unfiltered = tools.search(query, mode=mode, limit=10)
    assert not DEEP & {hit["source"] for hit in unfiltered["hits"]}  # ranked below the first ten
    assert found(tools, mode, query=query, limit=3, tags=["deep"]) == DEEP
    assert found(tools, mode, query=query, limit=2, tags=["deep"], since="2020-02") == {
        "deep/page1.md",
        "deep/page2.md",
    }
    reply = tools.search(query, mode=mode, limit=3, per_document=1, filters=Filters.of(until="2020-12-31"))
    assert [hit["source"] for hit in reply["hits"]] and {hit["source"] for hit in reply["hits"]} == DEEP


def test_each_hit_carries_its_documents_own_metadata(tools):
    hits = {hit["source"]: hit for hit in tools.search(QUERY, mode="text", limit=MAX_LIMIT)["hits"]}
    install = hits["guide/install.md"]["metadata"]
    assert {key: install[key] for key in ("tags", "date", "author", "file_type")} == {
        "tags": ["Setup", "Linux"],
        "date": "2024-01-10",
        "author": "Ann",
        "file_type": "md",
    }
    assert "title" not in install and layout.META not in install
    assert hits["notes/odd.md"]["metadata"]["tags"] == [3, 2024] and hits["notes/odd.md"]["metadata"]["count"] == 7
    assert "nested" not in hits["notes/odd.md"]["metadata"] and "ratio" not in hits["notes/odd.md"]["metadata"]
    assert hits["web/page.html"]["metadata"]["keywords"] == ["Setup", "Web"]
    assert hits["manual.pdf"]["metadata"]["created"] == "2024-05-15T12:00:00Z"
    assert hits["report.docx"]["metadata"]["keywords"] == "docx, Linux"
    assert hits["plain.txt"]["metadata"] == {layout.FILE_TYPE: "txt"}  # no metadata of its own; no hashes


@pytest.mark.parametrize("tag", metadata_corpus.HOSTILE_TAGS)
def test_a_hostile_tag_matches_literally(filters_db, tools, tag):
    before = lance.dataset(str(filters_db / "documents.lance")).count_rows()
    assert found(tools, tags=[tag]) == {"hostile.md"}
    assert lance.dataset(str(filters_db / "documents.lance")).count_rows() == before


@pytest.mark.parametrize("tag", ["_", "%%", "a_b", "x%y", "' OR '1'='1", "setup\x1flinux", "sprocket", "\u202esetup"])
def test_tags_that_only_look_like_patterns_or_cross_separators_match_nothing(tools, tag):
    assert found(tools, tags=[tag]) == set()


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"since": "2024-13"}, "since must be a date, YYYY-MM-DD, YYYY-MM or YYYY: there is no such month"),
        ({"until": "2023-02-29"}, "until must be a date, YYYY-MM-DD, YYYY-MM or YYYY: there is no such day"),
        ({"since": "yesterday"}, "since must be a date, YYYY-MM-DD, YYYY-MM or YYYY: not a date"),
        ({"until": "0000-01"}, "until must be a date, YYYY-MM-DD, YYYY-MM or YYYY: there is no year 0"),
        ({"since": "２０２４"}, "since must be a date, YYYY-MM-DD, YYYY-MM or YYYY: not a date"),
        ({"since": "2024-05", "until": "2024-04-30"}, "since (2024-05) is after until (2024-04-30)"),
        ({"tags": ["  \x1f "]}, "tags[0] holds nothing to match, only spaces or control characters"),
        ({"tags": []}, "tags must list 1 to 20 tags; got 0"),
        ({"types": ["exe"]}, "Unknown file type 'exe' in types; use docx, html, md, pdf, rst, txt"),
        ({"tag_match": "most"}, "tagMatch must be one of any, all; got 'most'"),
    ],
)
def test_invalid_filters_are_refused_naming_the_argument(filters, message):
    with pytest.raises(InvalidRequest) as refused:
        Filters.of(**filters)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("table", ["old", "workspace"])
def test_a_table_without_metadata_is_searched_but_refuses_a_filter(filters_db, make_tools, table):
    tools = make_tools(filters_db, LANCEDB_TABLE=table)
    query = "sprocket" if table == "old" else "recall"
    assert tools.search(query, mode="text")["hits"]
    with pytest.raises(InvalidRequest) as refused:
        tools.search(query, mode="text", filters=Filters.of(types=["md"]))
    assert f"Table '{table}' holds no document metadata to filter by" in str(refused.value)
    assert "Rebuild it with lancelot-index" in str(refused.value)


def test_several_tables_are_filtered_alike_and_one_without_metadata_refuses_them_all(filters_db, make_tools):
    tools = make_tools(filters_db, LANCELOT_TABLES="*")
    reply = tools.search(
        QUERY, mode="text", limit=MAX_LIMIT, table=["documents", "deep"], filters=Filters.of(tags=["deep", "linux"])
    )
    assert {(hit["table"], hit["source"]) for hit in reply["hits"]} == {
        *(("documents", source) for source in LINUX),
        *(("deep", source) for source in DEEP | LINUX),
    }
    with pytest.raises(InvalidRequest, match="Table 'old' holds no document metadata"):
        tools.search(QUERY, table=["documents", "old"], filters=Filters.of(tags=["setup"]))


def test_lancedb_query_is_filtered_too_and_its_header_says_by_what(tools):
    text = tools.query(QUERY, mode="text", limit=MAX_LIMIT, filters=Filters.of(types=["pdf"]))
    assert "manual.pdf" in text and "guide/install.md" not in text and "report.docx" not in text
    assert f'- query: {QUERY}\n- filters: types ["pdf"]\n' in text
    asked = Filters.of(tags=["Linux", "setup"], tag_match="all", since="2023", until="2025-02")
    text = tools.query(QUERY, mode="text", limit=MAX_LIMIT, path="guide/", filters=asked)
    assert "guide/install.md" in text
    assert (
        '- filters: tags ["linux", "setup"] (tagMatch all) · since 2023-01-01 · until 2025-02-28 · path "guide/"\n'
        in text
    )
    assert "- filters" not in tools.query(QUERY, mode="text", limit=MAX_LIMIT)


@pytest.mark.parametrize("mode", ["text", "hybrid"])
def test_a_filter_no_document_passes_says_so_and_looks_no_further(tools, monkeypatch, mode):
    monkeypatch.setattr(substring, "search", lambda *arguments: pytest.fail("the substring match ran"))
    reply = tools.search("no such words", mode=mode, filters=Filters.of(tags=["absent"]))
    assert (reply["hits"], reply["note"]) == ([], NONE_KEPT)
    monkeypatch.undo()  # a filter some documents pass: the substring match looks, and finds nothing
    reply = tools.search("zyxwvut", mode="text", filters=Filters.of(tags=["setup"]))
    assert reply["hits"] == [] and "note" not in reply


@pytest.mark.parametrize("match", ["any", "all"])
def test_the_most_tags_a_search_takes_cost_little_cpu(filters_db, match):
    """Through the SDK's client in this process: a condition that grew one level deeper with each tag cost twice
    as much CPU per tag (10 tags 0.01 s, 15 tags 0.3 s, 20 tags 9-10 s on main before); now it grows linearly."""
    tags = ["setup", *(f"absent {number}" for number in range(MAX_TAGS - 1))]
    if match == "all":
        tags = tags[::-1]  # no document has them all: the substring match is skipped (NONE_KEPT) for any order

    async def calls(client):
        await client.call_tool("lancedb_search", {"query": QUERY, "mode": "text", "tags": ["setup"]})  # warm
        started = time.process_time()
        result = await client.call_tool(
            "lancedb_search", {"query": QUERY, "mode": "text", "limit": MAX_LIMIT, "tags": tags, "tagMatch": match}
        )
        return time.process_time() - started, result

    spent, result = session(filters_db, calls, LANCEDB_TABLE="documents")
    assert not result.is_error, result.content[0].text
    expected = SETUP if match == "any" else set()
    assert {hit["source"] for hit in result.structured_content["hits"]} == expected
    assert spent < 1.5, f"{MAX_TAGS} tags took {spent:.2f} s of CPU"


def test_more_tags_than_a_search_takes_are_refused_saying_what_to_do(filters_db):
    tags = [f"tag {number}" for number in range(MAX_TAGS + 1)]
    with pytest.raises(InvalidRequest) as refused:
        Filters.of(tags=tags)
    result = call(filters_db, "lancedb_search", {"query": QUERY, "tags": tags}, LANCEDB_TABLE="documents")
    assert str(refused.value).startswith(f"tags lists {MAX_TAGS + 1} tags; a search takes at most {MAX_TAGS} tags")
    assert result.content[0].text.startswith("Invalid arguments for lancedb_search: tags: Input should list at most")
    assert f"(got an array of {MAX_TAGS + 1} items)" in result.content[0].text
    for message in (str(refused.value), result.content[0].text):
        assert "keep the tags that matter most, and with tagMatch any search again for the others" in message
    unfiltered = call(filters_db, "lancedb_search", {"query": QUERY, "tags": None}, LANCEDB_TABLE="documents")
    assert not unfiltered.is_error and unfiltered.structured_content["hits"], unfiltered.content[0].text
