"""Reading on, through the real server over real stdio and real HTTP with the MCP SDK's client: neighbours,
whole documents walked by their continuation, document resources, links, and locators checked against
the source files themselves."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from tests.server import corpus
from tests.server.reading.long_reads import joined, long_markdown, stored_texts

# One worker runs this module when the suite runs on several: the module's databases, made once.
pytestmark = pytest.mark.xdist_group("reading_db")

ROOT = Path(__file__).resolve().parents[2]
GITHUB = "https://github.com/you/repo/blob/main/docs/{path}#L{line}-L{line_end}"
SITE = "https://docs.example.com/{path}#{anchor}"
PAGE = """<html><head><title>Reference</title></head><body>
<nav id="menu"><a href="#a">skip</a></nav>
<p>Before any anchor: the preface of the reference.</p>
<section id="install"><h1>Install</h1><p>Run the installer, then restart.</p>
<p>The <span id="flags">flags</span> change how it runs; each is described below in turn.</p>
<a name="legacy"></a><p>Older releases used a different installer.</p></section>
<section id="usage"><h2>Usage</h2><pre id="example">tool --run
tool --stop</pre><p>Stop it before an upgrade.</p></section>
</body></html>"""


@pytest.fixture(scope="module")
def reading_db(tmp_path_factory):
    """examples/docs plus a long manual and an HTML page with anchors, as `documents` (no link template),
    `linked` (a GitHub template with lines) and `site` (a site template with anchors)."""
    root = tmp_path_factory.mktemp("reading")
    docs = root / "docs"
    shutil.copytree(ROOT / "examples" / "docs", docs)
    corpus.write_docs(docs, {"manual.md": long_markdown(), "reference.html": PAGE})
    db = root / "db"
    corpus.index(docs, db)
    corpus.index(docs, db, "--table", "linked", "--link", GITHUB)
    corpus.index(docs, db, "--table", "site", "--link", SITE)
    return docs, db


async def walk(client, first, budget):
    """Follow `next` from `first`; every reply within `budget`; the passages in the order they came."""
    arguments, pieces = {**first, "budget": budget}, []
    while True:
        result = await client.call_tool("lancedb_read", arguments)
        assert not result.is_error, result.content[0].text
        assert len(result.content[0].text) <= budget
        reply = result.structured_content
        pieces.extend(reply["passages"])
        if "next" not in reply:
            return pieces
        arguments = {**reply["next"], "budget": budget}


TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_hit_is_read_on_with_its_neighbours(reading_db, servers, transport):
    _docs, db = reading_db

    async def session(client):
        hit = (await client.call_tool("lancedb_search", {"query": "patch the hole", "limit": 3})).structured_content
        top = hit["hits"][0]
        read = await client.call_tool("lancedb_read", {"id": top["id"], "before": 1, "after": 1})
        return top, read

    top, read = servers.over(transport, db, session)
    assert top["id"] == "guide/puncture.md#3" and top["passage"] == 3
    reply = read.structured_content
    assert [p["number"] for p in reply["passages"]] == [2, 3] and reply["total"] == 4
    assert [p["text"] for p in reply["passages"]] == stored_texts(db, "documents", "guide/puncture.md")[2:4]
    assert reply["end"] == "document" and "the end of the document" in read.content[0].text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_document_walked_by_its_continuation_gives_every_passage_once_at_every_budget(
    reading_db, servers, transport
):
    _docs, db = reading_db
    sources = ["manual.md", "guide/puncture.md", "hours.html", "reference.html", "guide/chain-care.txt"]

    async def session(client):
        walked = {}
        for budget in (500, 1_000, 12_000, 100_000):
            for source in sources:
                walked[budget, source] = await walk(client, {"source": source}, budget)
        return walked

    walked = servers.over(transport, db, session)
    for (_, source), pieces in walked.items():
        assert joined(pieces) == stored_texts(db, "documents", source), source


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_documents_are_resources_listed_and_read(reading_db, servers, transport):
    docs, db = reading_db

    async def session(client):
        listing = await client.list_resources()
        templates = (await client.list_resource_templates()).resource_templates
        manual = await client.read_resource("lancelot://documents/manual.md")
        return listing, templates, manual.contents[0]

    listing, templates, manual = servers.over(transport, db, session)
    assert [r.name for r in listing.resources] == sorted(
        str(path.relative_to(docs)) for path in docs.rglob("*") if path.is_file()
    )
    assert listing.next_cursor is None
    assert templates[0].uri_template == "lancelot://{table}/{+source}"
    assert manual.mime_type == "text/markdown" and manual.text.startswith("# The long manual\n")
    assert len(manual.text) < 12_300 and "Continue with" in manual.text and "?from=" in manual.text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_urls_are_there_exactly_when_the_table_has_a_link_template(reading_db, servers, transport):
    _docs, db = reading_db

    async def session(client):
        found = {}
        for table in ("documents", "linked", "site"):
            hits = await client.call_tool("lancedb_search", {"query": "installer", "table": table, "limit": 10})
            read = await client.call_tool("lancedb_read", {"source": "guide/puncture.md", "table": table})
            found[table] = hits.structured_content, read.structured_content
        return found

    found = servers.over(transport, db, session, LANCELOT_TABLES="linked,site")
    hits, read = found["documents"]
    assert hits["hits"] and not any("url" in hit for hit in hits["hits"])
    assert "url" not in read and not any("url" in passage for passage in read["passages"])
    hits, read = found["linked"]
    assert read["url"] == "https://github.com/you/repo/blob/main/docs/guide/puncture.md"
    for passage in read["passages"]:
        first, last = passage["lines"]
        assert passage["url"] == f"{read['url']}#L{first}-L{last}"
    for hit in hits["hits"]:  # HTML has no lines: the link points at the page
        assert hit["url"] == f"https://github.com/you/repo/blob/main/docs/{hit['source']}"
    hits, _ = found["site"]
    for hit in hits["hits"]:
        anchor = f"#{hit['anchor']}" if "anchor" in hit else ""
        assert hit["url"] == f"https://docs.example.com/{hit['source']}{anchor}"
    assert any("anchor" in hit for hit in hits["hits"])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_lines_point_at_each_passages_first_and_last_line_and_anchors_exist_in_the_page(reading_db, servers, transport):
    docs, db = reading_db
    sources = ["manual.md", "guide/puncture.md", "guide/chain-care.txt", "README.md", "reference.html", "hours.html"]

    async def session(client):
        return {source: await walk(client, {"source": source}, 100_000) for source in sources}

    walked = servers.over(transport, db, session)
    for source, passages in walked.items():
        content = (docs / source).read_text(encoding="utf-8")
        if source.endswith(".html"):
            ids = set(re.findall(r'\b(?:id|name)="([^"]+)"', content))
            assert all("lines" not in passage for passage in passages)
            for passage in passages:
                if "anchor" in passage:
                    assert passage["anchor"] in ids, (source, passage)
            continue
        lines = content.split("\n")
        for passage in passages:
            first, last = passage["lines"]
            words = passage["text"].split()
            assert words[0] in lines[first - 1], (source, passage["number"], lines[first - 1], words[0])
            assert words[-1] in lines[last - 1], (source, passage["number"], lines[last - 1], words[-1])
    reference = {p["text"].split("\n")[0]: p.get("anchor") for p in walked["reference.html"]}
    assert reference.get("Install") == "install" and reference.get("Usage") == "usage"


@pytest.fixture(scope="module")
def many_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    docs = {f"notes/{number:03d}.md": f"# Note {number}\n\nThe note numbered {number}.\n" for number in range(230)}
    return corpus.built(root, docs)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_resources_are_listed_page_by_page_with_the_protocols_cursor(many_db, servers, transport):
    async def session(client):
        pages, cursor = [], None
        while True:
            page = await client.list_resources(cursor=cursor)
            pages.append([resource.name for resource in page.resources])
            if page.next_cursor is None:
                last = await client.read_resource(page.resources[-1].uri)
                return pages, last.contents[0].text
            cursor = page.next_cursor

    pages, last = servers.over(transport, many_db, session)
    assert [len(page) for page in pages] == [100, 100, 30]
    assert [name for page in pages for name in page] == [f"notes/{number:03d}.md" for number in range(230)]
    assert last.startswith("# Note 229\n") and "The note numbered 229." in last
