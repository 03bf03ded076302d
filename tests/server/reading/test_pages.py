"""Pages (layout 5) through the server: a PDF's hits and read passages say which page they are on, and tables of
older layouts, which have no page column, answer as before."""

from __future__ import annotations

import lance
import pytest
from tests.server import corpus
from tests.support.documents import Line, make_pdf

from lancelot_schema import layout

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("paged_db")

PAGES = [
    [Line("Backups", 18, 720), Line("Take a backup with pg_dump every night.", 11, 690)],
    [Line("Restoring", 18, 720), Line("Restore it with pg_restore into an empty database.", 11, 690)],
    [Line("Checking", 18, 720), Line("Compare the row counts after a restore.", 11, 690)],
]
PAGE_LINK = "https://example.org/docs/{path}#page={page}"


@pytest.fixture(scope="module")
def paged_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("pages")
    docs = corpus.write_docs(root / "docs", {"notes.md": "# Notes\n\nThe restore notes live here.\n"})
    (docs / "guide.pdf").write_bytes(make_pdf(PAGES, title="Backup Guide"))
    db = root / "db"
    corpus.index(docs, db)
    corpus.index(docs, db, "--table", "linked", "--link", PAGE_LINK)
    # The same table as the layout-4 indexer wrote it: its indexes, no page column, stamped 4.
    corpus.index(docs, db, "--table", "older")
    older = lance.dataset(str(db / "older.lance"))
    older.drop_columns([layout.PAGE])
    older.update_schema_metadata({layout.META_LAYOUT_VERSION: "4"})
    return db


def test_a_pdf_hit_carries_its_page_and_other_hits_none(paged_db, make_tools):
    hits = make_tools(paged_db).search("restore", mode="text", per_document=3)["hits"]
    pages = {hit["id"]: hit.get("page") for hit in hits}
    assert pages["guide.pdf#1"] == 2 and pages["guide.pdf#2"] == 3
    assert pages["notes.md#0"] is None
    assert all("page" not in hit["metadata"] for hit in hits)


def test_the_query_block_names_the_page_beside_the_source(paged_db, make_tools):
    block = make_tools(paged_db).query("pg_restore", mode="text")
    assert "Source: guide.pdf, page 2\n" in block
    assert "## 1. Backup Guide" in block


def test_reading_a_pdf_passage_says_its_page_and_its_neighbours_theirs(paged_db, make_tools):
    reading = make_tools(paged_db).read(id="guide.pdf#1")
    assert [(passage["number"], passage["page"]) for passage in reading.reply["passages"]] == [(0, 1), (1, 2), (2, 3)]
    assert "## Passage 1 · Restoring\npage 2\n" in reading.text
    onward = make_tools(paged_db).read(source="guide.pdf", start=2)
    assert onward.reply["passages"][0]["page"] == 3 and "\npage 3\n" in onward.text


def test_a_table_of_layout_4_without_pages_answers_searches_and_reads(paged_db, make_tools):
    tools = make_tools(paged_db, LANCELOT_TABLES="older")
    found = tools.search("pg_restore", mode="text", table="older")
    assert found["textMatch"] == "bm25" and found["hits"][0]["id"] == "guide.pdf#1"
    assert "page" not in found["hits"][0]
    assert ", page" not in tools.query("pg_restore", mode="text", table="older")
    reading = tools.read(id="guide.pdf#1", table="older")
    assert all("page" not in passage for passage in reading.reply["passages"])
    assert "\npage " not in reading.text


def test_a_page_link_opens_each_pdf_passage_at_its_page_and_other_documents_at_their_top(paged_db, make_tools):
    tools = make_tools(paged_db, LANCELOT_TABLES="linked")
    hits = tools.search("restore", mode="text", per_document=3, table="linked")["hits"]
    urls = {hit["id"]: hit["url"] for hit in hits}
    assert urls["guide.pdf#1"] == "https://example.org/docs/guide.pdf#page=2"
    assert urls["guide.pdf#2"] == "https://example.org/docs/guide.pdf#page=3"
    assert urls["notes.md#0"] == "https://example.org/docs/notes.md"  # no page: no fragment, as for an anchor
    assert "(https://example.org/docs/guide.pdf#page=2)" in tools.query("pg_restore", mode="text", table="linked")


def test_reading_a_pdf_with_a_page_link_links_each_passage_to_its_page_and_the_document_to_the_file(
    paged_db, make_tools
):
    reading = make_tools(paged_db, LANCELOT_TABLES="linked").read(source="guide.pdf", table="linked")
    assert reading.reply["url"] == "https://example.org/docs/guide.pdf"
    assert [passage["url"] for passage in reading.reply["passages"]] == [
        f"https://example.org/docs/guide.pdf#page={page}" for page in (1, 2, 3)
    ]
    assert "page 2 · https://example.org/docs/guide.pdf#page=2\n" in reading.text
    notes = make_tools(paged_db, LANCELOT_TABLES="linked").read(source="notes.md", table="linked").reply
    assert [passage["url"] for passage in notes["passages"]] == ["https://example.org/docs/notes.md"]
