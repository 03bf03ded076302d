"""AnythingLLM's documents, each one document however AnythingLLM names its source, through the SDK's client.

The table is shaped as AnythingLLM writes it (`corpus.anythingllm_workspace`, from Mintplex-Labs/anything-llm:
collector/processSingleFile/convert/asTxt.js and asPDF/index.js write `docSource` "a text file uploaded by the
user." (or "pdf file ...") for every upload and `chunkSource: metadata.chunkSource || ""`, and `url` "file://" and
the file's path; collector/processLink/convert/generic.js writes `chunkSource` "link://" and the link;
collector/processRawText/index.js a slug; server/utils/vectorDbProviders/lance/index.js stores each chunk with
those fields as columns). A document is the rows that share a `url` (then a `title`), while each hit still shows
its source as chunkSource, docSource or path, the first that is not empty.
"""

from __future__ import annotations

import lancedb
import pytest
from lancedb.index import FTS
from tests.server import corpus
from tests.server.test_app import session
from tests.support.embedding_server import EmbeddingServer

# One worker runs this module when the suite runs on several: the module's database and embedding endpoint, made once.
pytestmark = pytest.mark.xdist_group("anythingllm_db")


UPLOAD = "a text file uploaded by the user."
WIDTH = 8
# Each document of the workspace by its url: its title and its number of chunks.
DOCUMENTS = {url: (title, len(chunks)) for title, url, *_, chunks in corpus.ANYTHINGLLM_DOCUMENTS}
CHAIN, PUNCTURE = f"file://{corpus.HOTDIR}/chain-care.txt", f"file://{corpus.HOTDIR}/puncture.txt"


@pytest.fixture(scope="module")
def endpoint():
    with EmbeddingServer() as server:
        yield server


@pytest.fixture(scope="module")
def workspace_db(tmp_path_factory):
    """`workspace` as AnythingLLM writes it; `indexed`, the same with a full-text index (for hybrid search)."""
    db = tmp_path_factory.mktemp("anythingllm") / "db"
    corpus.anythingllm_workspace(db, "workspace", WIDTH)
    corpus.anythingllm_workspace(db, "indexed", WIDTH)
    lancedb.connect(str(db)).open_table("indexed").create_index("text", config=FTS())
    return db


def served(db, endpoint, calls, table="workspace"):
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": endpoint.url, "EMBEDDING_MODEL": f"test-{WIDTH}"}
    return session(db, calls, LANCEDB_TABLE=table, **environ)


@pytest.mark.parametrize(("table", "mode"), [("workspace", "text"), ("workspace", "vector"), ("indexed", "hybrid")])
def test_two_uploads_that_match_are_two_hits_each_showing_anythingllms_source(workspace_db, endpoint, table, mode):
    async def calls(client):
        return await client.call_tool("lancedb_search", {"query": "sprocket", "mode": mode, "limit": 10})

    result = served(workspace_db, endpoint, calls, table)
    assert not result.is_error, result.content[0].text
    reply = result.structured_content
    assert reply["searchType"] == mode
    found = {(hit["title"], hit["source"]) for hit in reply["hits"]}
    # Before, both uploads were one document ("a text file uploaded by the user.") and the cap kept one of them.
    assert {("chain-care.txt", UPLOAD), ("puncture.txt", UPLOAD)} <= found
    titles = [hit["title"] for hit in reply["hits"]]
    assert len(titles) == len(set(titles))  # still one passage per document
    if mode == "text":
        assert ("example.com_hours.html", "link://https://example.com/hours") in found
        assert {hit["metadata"]["url"] for hit in reply["hits"]} == {CHAIN, PUNCTURE, "file://example.com_hours.html"}


def test_an_upload_is_read_on_alone_by_a_hits_id_and_its_url(workspace_db, endpoint):
    async def calls(client):
        found = await client.call_tool("lancedb_search", {"query": "oil every link", "mode": "text"})
        hit = found.structured_content["hits"][0]
        by_id = await client.call_tool("lancedb_read", {"id": hit["id"]})
        by_url = await client.call_tool("lancedb_read", {"source": PUNCTURE})
        return hit, by_id.structured_content, by_url.structured_content

    hit, by_id, by_url = served(workspace_db, endpoint, calls)
    assert (hit["title"], hit["source"]) == ("chain-care.txt", UPLOAD)
    assert (by_id["source"], by_id["title"], by_id["total"], by_id["end"]) == (CHAIN, "chain-care.txt", 2, "document")
    assert [passage["text"] for passage in by_id["passages"]] == [
        "Clean the sprocket and the chain every month.",
        "Then oil every link of the chain.",
    ]
    assert (by_url["source"], by_url["title"], by_url["total"]) == (PUNCTURE, "puncture.txt", 2)


def test_a_source_that_names_one_document_reads_it_and_one_many_share_is_refused(workspace_db, endpoint):
    async def calls(client):
        link = await client.call_tool("lancedb_read", {"source": "link://https://example.com/hours"})
        shared = await client.call_tool("lancedb_read", {"source": UPLOAD})
        return link, shared

    link, shared = served(workspace_db, endpoint, calls)
    assert (link.structured_content["title"], link.structured_content["total"]) == ("example.com_hours.html", 1)
    assert shared.is_error
    message = shared.content[0].text
    assert f"source {UPLOAD!r} is shared by 2 documents of table 'workspace'" in message, message
    assert "a hit's `id`" in message and "`url`" in message, message


def test_each_document_is_a_resource_named_by_its_url(workspace_db, endpoint):
    async def calls(client):
        listed = (await client.list_resources()).resources
        read = {item.name: (await client.read_resource(item.uri)).contents[0].text for item in listed}
        return listed, read

    listed, read = served(workspace_db, endpoint, calls)
    assert {item.name: item.title for item in listed} == {url: title for url, (title, _) in DOCUMENTS.items()}
    for url, (title, count) in DOCUMENTS.items():
        assert read[url].startswith(f"# {title}\n"), read[url]
        assert f"Source: {url} · {count} passage" in read[url], read[url]
