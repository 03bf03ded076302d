"""lancedb_read and the document resources through the SDK's own client, in process: schemas, replies,
pagination, and refusals as tool errors or JSON-RPC errors, never tracebacks."""

from __future__ import annotations

import base64
import re

import jsonschema
import pytest
from mcp.shared.exceptions import MCPError
from tests.server import corpus
from tests.server.test_app import call, listed, session

from lancelot_server.reading import resources
from lancelot_server.reading.read import DEFAULT_BUDGET

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("many_db")


def test_read_declares_its_arguments_with_from_on_the_wire(lancelot_db):
    tool = listed(lancelot_db)["lancedb_read"]
    schema = tool.input_schema
    assert set(schema["properties"]) == {"id", "source", "table", "before", "after", "from", "offset", "budget"}
    assert schema["additionalProperties"] is False and "required" not in schema
    assert (schema["properties"]["after"]["anyOf"][0]["maximum"], schema["properties"]["budget"]["default"]) == (
        20,
        12_000,
    )
    assert tool.annotations.read_only_hint is True and tool.output_schema["type"] == "object"


def test_a_read_is_markdown_text_with_matching_structured_content(lancelot_db):
    schema = listed(lancelot_db)["lancedb_read"].output_schema
    result = call(lancelot_db, "lancedb_read", {"id": "guide/puncture.md#1"})
    assert not result.is_error
    reply = result.structured_content
    jsonschema.validate(reply, schema)
    text = result.content[0].text
    assert text.startswith("# Fixing a puncture\n") and "Source: guide/puncture.md · 3 passages" in text
    for passage in reply["passages"]:
        assert f"## Passage {passage['number']}" in text and passage["text"] in text
    continued = call(lancelot_db, "lancedb_read", {"source": "guide/puncture.md", "from": 2, "budget": 600})
    assert [p["number"] for p in continued.structured_content["passages"]] == [2]
    jsonschema.validate(continued.structured_content, schema)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"id": "guide/puncture.md#0", "before": 21}, ["before", "less than or equal to 20"]),
        ({"source": "guide/puncture.md", "from": -1}, ["from", "greater than or equal to 0"]),
        ({"source": "x" * 5000}, ["source", "at most 4200", "5,000 characters"]),
        ({"source": "guide/puncture.md", "start": 1}, ["start is not a parameter", "from"]),
        ({"id": "guide/puncture.md"}, ["is not a passage id of table 'documents'"]),
        ({"source": "../hours.html"}, ["source '../hours.html' is not a document"]),
        ({"source": "a\x00b"}, ["NUL character"]),
    ],
)
def test_bad_reads_are_tool_errors_naming_the_argument(lancelot_db, arguments, words):
    result = call(lancelot_db, "lancedb_read", arguments)
    assert result.is_error
    for word in words:
        assert word in result.content[0].text
    assert "Traceback" not in result.content[0].text and "pydantic" not in result.content[0].text


@pytest.fixture(scope="module")
def many_db(tmp_path_factory):
    """A table of 250 documents, named so that their sorted order is known."""
    root = tmp_path_factory.mktemp("many")
    docs = {f"d/{number:03d} doc%?#.md": f"# Title {number}\n\nBody {number}.\n" for number in range(250)}
    return corpus.built(root, docs)


def test_documents_are_listed_in_pages_by_cursor_and_each_can_be_read(many_db):
    async def calls(client):
        pages, cursor = [], None
        while True:
            page = await client.list_resources(cursor=cursor)
            pages.append(page.resources)
            cursor = page.next_cursor
            if cursor is None:
                break
        templates = (await client.list_resource_templates()).resource_templates
        first = await client.read_resource(pages[0][0].uri)
        last = await client.read_resource(pages[-1][-1].uri)
        return pages, templates, first, last

    pages, templates, first, last = session(many_db, calls)
    assert [len(page) for page in pages] == [resources.PAGE, resources.PAGE, 50]
    listed = [resource for page in pages for resource in page]
    assert [r.name for r in listed] == [f"d/{number:03d} doc%?#.md" for number in range(250)]
    assert listed[7].title == "Title 7" and listed[7].mime_type == "text/markdown"
    assert listed[7].uri == "lancelot://documents/d/007%20doc%25%3F%23.md"
    assert templates[0].uri_template == "lancelot://{table}/{+source}"
    assert first.contents[0].text.startswith("# Title 0\n") and "Body 0." in first.contents[0].text
    assert "Body 249." in last.contents[0].text and "the end of the document" in last.contents[0].text


def test_a_long_document_resource_is_bounded_and_says_how_to_read_on(tmp_path):
    long = "\n\n".join(f"Paragraph {n} " + "word " * 200 for n in range(60))
    corpus.index(corpus.write_docs(tmp_path / "docs", {"long.txt": long}), tmp_path / "db")

    async def calls(client):
        first = (await client.read_resource("lancelot://documents/long.txt")).contents[0].text
        second = (await client.read_resource("lancelot://documents/long.txt?from=9")).contents[0].text
        return first, second

    first, second = session(tmp_path / "db", calls)
    assert len(first) <= DEFAULT_BUDGET and "Continue with" in first
    assert "_Or read the resource lancelot://documents/long.txt?from=" in first
    assert second.split("\n## ")[1].startswith("Passage 9")


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("lancelot://documents/nope.md", ["source 'nope.md' is not a document of table 'documents'"]),
        ("lancelot://documents/../guide/puncture.md", ["is not a document"]),
        ("lancelot://documents/", ["names no document"]),
        ("file:///etc/passwd", ["is not a Lancelot document"]),
        ("lancelot://nope/a.md", ["Table 'nope' is not in the database"]),
        ("lancelot://documents/guide/puncture.md?from=x", ["from=N and offset=N only"]),
        ("lancelot://documents/guide/puncture.md?from=99", ["from=99 is past the end"]),
        ("lancelot://documents/a%00b", ["NUL character"]),
    ],
)
def test_a_resource_that_names_nothing_is_an_invalid_params_error(lancelot_db, uri, words):
    async def calls(client):
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
        return refused.value

    error = session(lancelot_db, calls)
    assert error.error.code == -32602
    for word in words:
        assert word in error.error.message


def test_a_cursor_the_server_never_gave_is_refused(lancelot_db):
    async def calls(client):
        with pytest.raises(MCPError) as refused:
            await client.list_resources(cursor="not-a-cursor")
        return refused.value

    assert "The cursor is not one this server gave" in session(lancelot_db, calls).error.message


def test_listing_uses_the_configured_table(lancelot_db):
    async def calls(client):
        return (await client.list_resources()).resources

    names = [r.name for r in session(lancelot_db, calls, LANCEDB_TABLE="workspace")]
    assert names == ["file:///uploads/chain.md", "file:///uploads/puncture.md", "https://example.com/hours"]


def _refused(db, calls, **environ):
    """The JSON-RPC error `calls(client)` meets (it must meet one)."""

    async def meeting(client):
        with pytest.raises(MCPError) as refused:
            await calls(client)
        return refused.value.error

    return session(db, meeting, **environ)


@pytest.mark.parametrize(
    ("cursor", "why"),
    [
        (base64.urlsafe_b64encode(b"[" * 40_000 + b"]" * 40_000).decode(), "nested 40,000 deep (RecursionError)"),
        (base64.urlsafe_b64encode(b"[" * 10_000 + b"]" * 10_000).decode(), "nested 10,000 deep, in a short cursor"),
        (base64.urlsafe_b64encode(b'{"table": "documents", "after": "' + b"a" * 100_000 + b'"}').decode(), "huge"),
        ("\u00b2\u00b2\u00b2\u00b2", "not ASCII"),
    ],
)
def test_a_hostile_cursor_is_refused_with_the_reason_never_an_internal_error(lancelot_db, cursor, why):
    error = _refused(lancelot_db, lambda client: client.list_resources(cursor=cursor))
    assert (error.code, error.message) == (
        -32602,
        "The cursor is not one this server gave; list again without a cursor.",
    ), why


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("lancelot://documents/guide/puncture.md?from=\u00b2", ["from=N and offset=N only", "N in ASCII digits"]),
        ("lancelot://documents/guide/puncture.md?offset=\u0663", ["from=N and offset=N only"]),
        ("lancelot://documents/guide/puncture%FF.md", ["%FF", "not UTF-8", "percent-encode"]),
        ("lancelot://documents/%C3", ["not UTF-8"]),
    ],
)
def test_a_uri_that_cannot_be_decoded_is_refused_with_the_reason(lancelot_db, uri, words):
    error = _refused(lancelot_db, lambda client: client.read_resource(uri))
    assert error.code == -32602, error.message
    for word in words:
        assert word in error.message, error.message


def test_a_resource_whose_first_passage_is_cut_stays_within_the_default_budget(tmp_path):
    # The indexer's passages are at most 1,200 characters; another tool's may be longer than the whole budget.
    rows = [{"id": f"long.txt#{number}", "path": "long.txt", "text": "lorem ipsum " * 2000} for number in range(3)]
    corpus.plain_table(tmp_path / "db", "foreign", rows)

    async def calls(client):
        first = (await client.read_resource("lancelot://foreign/long.txt")).contents[0].text
        on = first.rpartition("_Or read the resource ")[2].removesuffix("._\n")
        return first, on, (await client.read_resource(on)).contents[0].text

    first, on, second = session(tmp_path / "db", calls, LANCEDB_TABLE="foreign")
    assert "## Passage 0 (cut)" in first and on.startswith("lancelot://foreign/long.txt?from=0&offset=")
    assert len(first) <= DEFAULT_BUDGET and len(second) <= DEFAULT_BUDGET, (len(first), len(second))
    assert "## Passage 0 (cut)" in second


def test_messages_quote_at_most_80_characters_of_a_long_source_or_table_name(tmp_path):
    source, table = "d/" + "s" * 3_800, "t" * 249
    corpus.plain_table(tmp_path / "db", table, [{"path": source, "text": "one short passage"}])

    async def calls(client):
        past = await client.call_tool("lancedb_read", {"source": source, "from": 5})
        small = await client.call_tool("lancedb_read", {"source": source, "budget": 500})
        no_id = await client.call_tool("lancedb_read", {"id": "x#1"})
        return [result.content[0].text for result in (past, small, no_id)]

    for message in session(tmp_path / "db", calls, LANCEDB_TABLE=table):
        assert len(message) < 400, message
        assert "s" * 80 not in message and "t" * 80 not in message, message


@pytest.mark.parametrize("arguments", [{"from": 1e308}, {"from": 0, "offset": 1e308}, {"from": 10**400}])
def test_a_huge_number_is_not_printed_whole(lancelot_db, arguments):
    message = call(lancelot_db, "lancedb_read", {"source": "guide/puncture.md", **arguments}).content[0].text
    assert len(message) < 300 and not re.search(r"[\d,]{30}", message), message
