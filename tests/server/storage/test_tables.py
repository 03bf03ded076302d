"""Several tables: the allow-list (LANCEDB_TABLE, LANCELOT_TABLES), the caller's table scope, searches of
several tables merged by rank, every way a table the caller may not see is answered as missing, and what a
refusal names instead (the tables the database holds, served or not, and the nearest to a mistyped name)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from tests.server import corpus
from tests.server.test_app import call, listed, session

from lancelot_server.auth import callers
from lancelot_server.errors import InvalidRequest, TableNotFound
from lancelot_server.reading import markdown, resources
from lancelot_server.storage.tables import MAX_TABLES

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("shelves")

MANUALS = {
    "chain-tool.md": "# The chain tool\n\nPush the chain pin out with the chain tool, then oil the chain.\n",
    "brakes.md": "# Brakes\n\nA worn brake pad squeals; the chain is not to blame.\n",
    "tyres.md": "# Tyres\n\nPump the tyre to the pressure on its wall.\n",
}


@pytest.fixture(scope="module")
def shelves(tmp_path_factory):
    """`documents` (the server tests' set), `manuals` (other pages), `secret`, and AnythingLLM's `workspace`."""
    root = tmp_path_factory.mktemp("shelves")
    db = corpus.built(root, corpus.DOCS)
    corpus.index(corpus.write_docs(root / "manuals", MANUALS), db, "--table", "manuals")
    corpus.index(
        corpus.write_docs(root / "secret", {"plans.md": "# Plans\n\nThe chain of command.\n"}), db, "--table", "secret"
    )
    corpus.anythingllm_table(db)
    return db


@pytest.fixture
def caller():
    """Make the requests of the test come from a caller limited to some tables, as the auth layer would."""
    tokens = []

    def limit(*tables):
        tokens.append(callers.current.set(callers.Principal(label="test", tables=frozenset(tables))))

    yield limit
    for token in reversed(tokens):
        callers.current.reset(token)


def refusal(action, *arguments, **keywords):
    """The message `action(...)` is refused with, as a missing table."""
    with pytest.raises(TableNotFound) as refused:
        action(*arguments, **keywords)
    return str(refused.value)


def masked(message, name):
    return message.replace(repr(name), "'X'")


# The allow-list ------------------------------------------------------------------------------------


def not_served(db, name, served):
    return (
        f"Table {name!r} is in the database {db} but not served (served: {served}). "
        "Set LANCEDB_TABLE to it, or add it to LANCELOT_TABLES."
    )


def test_by_default_only_the_configured_table_is_served_and_the_others_are_named_not_served(shelves, make_tools):
    tools = make_tools(shelves)
    missing = refusal(tools.search, "chain", table="nope")
    assert missing == (
        f"Table 'nope' is not in the database {shelves}, which holds 'documents', 'manuals', 'secret', 'workspace' "
        "(served: 'documents'). Set LANCEDB_TABLE or pass `table`, or build it with lancelot-index."
    )
    for name in ("manuals", "secret", "workspace"):
        assert refusal(tools.search, "chain", table=name) == not_served(shelves, name, "'documents'")
        assert refusal(tools.read, source="brakes.md", table=name) == not_served(shelves, name, "'documents'")
    status = tools.status()
    assert status["database"]["tables"] == ["documents", "manuals", "secret", "workspace"]
    # Names only: a table not served is never described, nor are its rows read.
    assert [table["name"] for table in status["tables"]] == ["documents"]
    assert "plans" not in json.dumps(status) and "Plans" not in json.dumps(status)


def test_a_mistyped_table_gets_the_nearest_name_and_the_fix_that_serves_it(shelves, make_tools):
    tools = make_tools(shelves, LANCELOT_TABLES="manuals")
    assert refusal(tools.search, "chain", table="manual") == (
        f"Table 'manual' is not in the database {shelves}, which holds 'documents', 'manuals', 'secret', 'workspace' "
        "(served: 'documents', 'manuals'). Did you mean 'manuals'? Pass it as `table`, or set LANCEDB_TABLE to it."
    )
    assert refusal(tools.search, "chain", table="secrets").endswith(
        "Did you mean 'secret'? Set LANCEDB_TABLE to it, or add it to LANCELOT_TABLES."
    )
    status = make_tools(shelves, LANCEDB_TABLE="Documents").status()
    assert status["database"]["tables"] == ["documents", "manuals", "secret", "workspace"]
    assert status["table"]["name"] == "Documents" and status["searchTypes"] == []
    assert "(served: none). Did you mean 'documents'? Set LANCEDB_TABLE to it" in status["table"]["error"]


def test_lancelot_tables_adds_tables_in_the_order_given(shelves, make_tools):
    tools = make_tools(shelves, LANCELOT_TABLES="workspace, manuals")
    status = tools.status()
    assert status["database"]["tables"] == ["documents", "workspace", "manuals", "secret"]
    assert [table["name"] for table in status["tables"]] == ["documents", "workspace", "manuals"]
    assert status["table"] == status["tables"][0]
    workspace = status["tables"][1]
    assert (workspace["vectorColumn"], workspace["fullTextIndex"], workspace["searchTypes"]) == (
        "vector",
        False,
        ["text"],
    )
    assert status["tables"][2]["rows"] >= 3 and status["tables"][2]["language"] == "english"
    assert tools.search("brake", mode="text", table="manuals")["hits"][0]["source"] == "brakes.md"
    assert refusal(tools.search, "x", table="secret") == not_served(
        shelves, "secret", "'documents', 'workspace', 'manuals'"
    )


def test_every_table_with_a_star_default_first_then_sorted(shelves, make_tools):
    tools = make_tools(shelves, LANCEDB_TABLE="manuals", LANCELOT_TABLES="*")
    names = ["manuals", "documents", "secret", "workspace"]
    assert tools.status()["database"]["tables"] == names
    assert [table["name"] for table in tools.status()["tables"]] == names
    assert tools.search("plans", mode="text", table="secret")["hits"][0]["source"] == "plans.md"


def test_a_served_table_the_database_lacks_is_described_as_missing(shelves, make_tools):
    status = make_tools(shelves, LANCELOT_TABLES="ghost").status()
    assert status["database"]["tables"] == ["documents", "manuals", "secret", "workspace"]
    ghost = status["tables"][1]
    assert (ghost["name"], ghost["exists"], ghost["searchTypes"]) == ("ghost", False, [])
    assert "Table 'ghost' is not in the database" in ghost["error"]


# Several tables in one search -----------------------------------------------------------------------


def test_hits_of_several_tables_come_by_rank_in_the_order_the_tables_were_asked(shelves, make_tools):
    tools = make_tools(shelves, LANCELOT_TABLES="manuals,workspace")
    query = "chain oil pump"
    alone = {name: tools.search(query, mode="text", table=name)["hits"] for name in ("documents", "manuals")}
    # documents: chain.md, puncture.md; manuals: chain-tool.md, then brakes.md and tyres.md
    assert (len(alone["documents"]), len(alone["manuals"])) == (2, 3)
    for order in (["documents", "manuals"], ["manuals", "documents"]):
        reply = tools.search(query, mode="text", limit=4, table=order)
        first, second = alone[order[0]], alone[order[1]]
        # The i-th hit of each table before any (i+1)-th, ties in the order asked; `limit` for the whole reply.
        assert reply["hits"] == [first[0], second[0], first[1], second[1]]
        assert [hit["table"] for hit in reply["hits"]] == order * 2
        assert "table" not in reply and reply["count"] == 4
        assert reply["tables"] == [
            {"table": order[0], "searchType": "text", "textMatch": "bm25", "count": 2},
            {"table": order[1], "searchType": "text", "textMatch": "bm25", "count": 2},
        ]
    reply = tools.search(query, mode="text", limit=50, table=["documents", "manuals"])
    assert reply["hits"] == [alone["documents"][0], alone["manuals"][0], alone["documents"][1], *alone["manuals"][1:]]


def test_each_table_is_searched_its_own_way_and_older_layouts_still_answer(shelves, make_tools):
    tools = make_tools(shelves, LANCELOT_TABLES="workspace,manuals")
    reply = tools.search("recall", mode="text", limit=10, per_document=1, table=["manuals", "workspace", "documents"])
    assert [entry["textMatch"] for entry in reply["tables"]] == ["substring", "substring", "bm25"]
    assert (reply["searchType"], reply["textMatch"]) == ("text", "substring")  # the first table's
    assert [(hit["table"], hit["source"]) for hit in reply["hits"]] == [
        ("workspace", "localfiles/chain.md"),
        ("documents", "guide/chain.md"),
    ]
    assert reply["hits"][0]["metadata"]["sourceDocument"] == "chain.md"  # AnythingLLM's header, read as ever


def test_per_document_caps_within_each_table_and_limit_caps_the_reply(shelves, make_tools):
    tools = make_tools(shelves, LANCELOT_TABLES="manuals")
    reply = tools.search("chain oil pump", mode="text", limit=50, per_document=1, table=["documents", "manuals"])
    pages = [(hit["table"], hit["source"]) for hit in reply["hits"]]
    assert len(pages) == len(set(pages)) and {table for table, _ in pages} == {"documents", "manuals"}
    assert tools.search("chain oil pump", mode="text", limit=2, table=["documents", "manuals"])["count"] == 2


def test_one_table_keeps_its_reply_and_names_the_table_on_each_hit(shelves, make_tools):
    reply = make_tools(shelves).search("puncture", mode="text")
    assert reply["table"] == "documents" and "tables" not in reply
    assert reply["hits"] and all(hit["table"] == "documents" for hit in reply["hits"])
    # A list of one table is one table.
    assert make_tools(shelves).search("puncture", mode="text", table=["documents"]) == reply


def test_a_fallback_note_names_its_table_and_the_query_is_embedded_once(lancelot_db, make_tools, embedding_server):
    tools = make_tools(
        lancelot_db,
        LANCEDB_TABLE="embedded",
        LANCELOT_TABLES="embedded_plain,documents",
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=embedding_server.url,
        EMBEDDING_MODEL="test-8",
    )
    reply = tools.search("press the patch firmly", mode="hybrid", table=["embedded", "embedded_plain", "documents"])
    assert [(entry["table"], entry["searchType"]) for entry in reply["tables"]] == [
        ("embedded", "hybrid"),
        ("embedded_plain", "vector"),
        ("documents", "text"),
    ]
    assert reply["note"] == (
        "Table 'embedded_plain': hybrid search needs a full-text index, which the table lacks; used vector search "
        "instead. Table 'documents': the table has no vector column (index it with `lancelot-index --embed`); used "
        "text search instead."
    )
    assert [r.inputs for r in embedding_server.requests] == [("press the patch firmly",)]


def test_query_shows_each_passage_s_table_when_several_are_searched(shelves, make_tools):
    tools = make_tools(shelves, LANCELOT_TABLES="manuals")
    block = tools.query("chain", mode="text", table=["documents", "manuals"])
    assert block.startswith("# Search results from 2 tables, in rank order\n")
    assert "- search types: `documents` text (bm25), `manuals` text (bm25)\n" in block
    assert block.index("Table: `documents`") < block.index("Table: `manuals`")
    assert "Table: " not in tools.query("chain", mode="text")


def test_the_header_of_many_long_table_names_stays_within_the_smallest_budget():
    names = [f"{n}{'t' * 240}" for n in range(MAX_TABLES)]
    reply = {
        "query": "q" * 2000,
        "mode": "auto",
        "searchType": "text",
        "textMatch": "substring",
        "note": "n" * 3000,
        "tables": [{"table": name, "searchType": "text", "textMatch": "substring", "count": 1} for name in names],
        "count": 1,
        "hits": [{"id": "a#0", "title": "A", "source": "a", "heading": None, "text": "w " * 400, "score": 1.0,
                  "metadata": {}, "table": names[0]}],
    }  # fmt: skip
    assert len(markdown.render(reply, 500)) <= 500


# Bad `table` values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ([], "1 to 8 tables; got 0"),
        (["documents", "documents"], "'documents' twice"),
        ([f"t{n}" for n in range(MAX_TABLES + 1)], "1 to 8 tables; got 9"),
        (["documents", 3], "a table name or a list of table names"),
        ([""], "empty name"),
    ],
)
def test_bad_table_lists_are_refused_by_the_tool(shelves, make_tools, table, words):
    with pytest.raises(InvalidRequest, match=words):
        make_tools(shelves).search("chain", table=table)


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ([], ["table", "at least 1 item", "got an array"]),
        (["documents", "documents"], ["table", "distinct", "'documents' is named twice"]),
        ([f"t{n}" for n in range(MAX_TABLES + 1)], ["table", "at most 8 items"]),
        (["documents", 3], ["table[1]", "valid string", "got 3"]),
        ([""], ["table[0]", "at least 1 character"]),
        (3, ["table", "a table name or a list of 1 to 8 table names", "got 3"]),
        ({"name": "x"}, ["table", "an object"]),
    ],
)
def test_bad_table_values_are_clear_tool_errors(shelves, table, words):
    for tool in ("lancedb_search", "lancedb_query"):
        result = call(shelves, tool, {"query": "chain", "table": table})
        assert result.is_error
        for word in words:
            assert word in result.content[0].text, result.content[0].text
        assert "one table" not in result.content[0].text and "several" not in result.content[0].text


def test_the_schema_says_one_table_or_a_list_of_distinct_ones_and_read_takes_one(shelves):
    tools = listed(shelves)
    for name in ("lancedb_search", "lancedb_query"):
        table = tools[name].input_schema["properties"]["table"]
        one, several = table["anyOf"][0]["oneOf"]
        assert (one["type"], several["type"], several["minItems"], several["maxItems"]) == ("string", "array", 1, 8)
        assert several["uniqueItems"] is True and several["items"]["maxLength"] == one["maxLength"]
    read = tools["lancedb_read"].input_schema["properties"]["table"]
    assert [option["type"] for option in read["anyOf"]] == ["string", "null"]


def test_a_reply_of_several_tables_matches_the_output_schema(shelves):
    schema = listed(shelves)["lancedb_search"].output_schema
    result = call(
        shelves, "lancedb_search", {"query": "chain", "table": ["documents", "manuals"]}, LANCELOT_TABLES="manuals"
    )
    assert not result.is_error, result.content[0].text
    jsonschema.validate(result.structured_content, schema)
    assert json.loads(result.content[0].text) == result.structured_content
    status = call(shelves, "lancedb_status", {}, LANCELOT_TABLES="manuals")
    jsonschema.validate(status.structured_content, listed(shelves)["lancedb_status"].output_schema)


# A caller limited to some tables ---------------------------------------------------------------------


def test_a_table_outside_the_caller_s_scope_is_refused_as_missing_everywhere(shelves, make_tools, caller):
    tools = make_tools(shelves, LANCELOT_TABLES="*")
    caller("documents", "manuals")
    missing = refusal(tools.search, "chain", table="nope")
    assert f"{shelves}, which holds 'documents', 'manuals'. Set" in missing
    refusals = [
        lambda: tools.search("chain", table="secret"),
        lambda: tools.search("chain", table=["documents", "secret"]),
        lambda: tools.query("chain", table="secret"),
        lambda: tools.read(source="plans.md", table="secret"),
        lambda: tools.read(id="plans.md#0", table="secret"),
        lambda: resources.Resources(tools).read("lancelot://secret/plans.md"),
    ]
    for refused in refusals:
        assert masked(refusal(refused), "secret") == masked(missing, "nope")
    status = tools.status()
    assert status["database"]["tables"] == ["documents", "manuals"]
    assert [table["name"] for table in status["tables"]] == ["documents", "manuals"]
    assert "secret" not in json.dumps(status) and "workspace" not in json.dumps(status)
    listed_tables = {item.uri.split("/")[2] for item in resources.Resources(tools).page(None)[0]}
    assert listed_tables == {"documents", "manuals"}
    # What the caller may see still answers.
    assert tools.search("chain", mode="text", table=["documents", "manuals"])["count"] >= 2


def test_a_scope_never_widens_what_the_server_serves(shelves, make_tools, caller):
    tools = make_tools(shelves)  # documents alone
    caller("documents", "secret")
    assert refusal(tools.search, "x", table="secret") == not_served(shelves, "secret", "'documents'")
    status = tools.status()
    assert status["database"]["tables"] == ["documents", "secret"]
    assert [table["name"] for table in status["tables"]] == ["documents"]
    assert "manuals" not in refusal(tools.search, "x", table="manuals").split(", which holds")[1]


def texts(reply):
    """Every string value in a reply, at any depth (not its keys)."""
    if isinstance(reply, dict):
        return [text for value in reply.values() for text in texts(value)]
    if isinstance(reply, list):
        return [text for value in reply for text in texts(value)]
    return [reply] if isinstance(reply, str) else []


def test_a_caller_without_the_default_table_gets_its_first_table_and_never_hears_of_the_default(
    shelves, make_tools, caller
):
    tools = make_tools(shelves, LANCELOT_TABLES="manuals,secret")
    caller("secret", "manuals")
    reply = tools.search("chain", mode="text")
    assert reply["table"] == "manuals"  # the first served table the caller sees
    status = tools.status()
    assert status["table"]["name"] == "manuals" and status["database"]["tables"] == ["manuals", "secret"]
    assert not any("documents" in value for value in texts(status))  # (the key `freshness.documents` is no name)
    assert "documents" not in refusal(tools.search, "x", table="documents").split(", which holds")[1]
    assert tools.read(source="brakes.md").reply["table"] == "manuals"


def test_a_caller_who_sees_no_table_is_told_so_without_a_name(shelves, make_tools, caller):
    tools = make_tools(shelves, LANCELOT_TABLES="*")
    caller()
    assert "is served to this caller (tables: none)" in refusal(tools.search, "chain")
    status = tools.status()
    assert (status["table"]["name"], status["tables"], status["database"]["tables"]) == ("", [], [])
    assert not any(name in json.dumps(status) for name in ("documents", "manuals", "secret", "workspace"))
    assert resources.Resources(tools).page(None) == ([], None)


# Resources -------------------------------------------------------------------------------------------


def test_resources_list_every_served_table_in_pages_that_cross_tables(shelves, make_tools, monkeypatch):
    monkeypatch.setattr(resources, "PAGE", 3)
    documents = resources.Resources(make_tools(shelves, LANCELOT_TABLES="manuals"))
    pages, cursor = [], None
    while True:
        page, cursor = documents.page(cursor)
        pages.append([item.uri for item in page])
        if cursor is None:
            break
    assert [len(page) for page in pages] == [3, 3, 1]
    assert [uri for page in pages for uri in page] == [
        *(f"lancelot://documents/{source}" for source in sorted(corpus.DOCS)),
        *(f"lancelot://manuals/{source}" for source in sorted(MANUALS)),
    ]


def test_a_cursor_into_a_table_the_caller_does_not_see_is_refused(shelves, make_tools, monkeypatch, caller):
    monkeypatch.setattr(resources, "PAGE", 5)
    tools = make_tools(shelves, LANCELOT_TABLES="manuals")
    _, cursor = resources.Resources(tools).page(None)  # its next page starts in manuals
    assert cursor is not None
    caller("documents")
    with pytest.raises(InvalidRequest, match="The cursor is not one this server gave"):
        resources.Resources(tools).page(cursor)


def test_a_resource_of_a_table_not_served_is_refused_through_the_protocol(shelves):
    async def calls(client):
        from mcp.shared.exceptions import MCPError

        messages = []
        for uri in ("lancelot://secret/plans.md", "lancelot://nope/plans.md"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            messages.append(refused.value.error.message)
        listing = await client.list_resources()
        return messages, [item.uri for item in listing.resources]

    (secret, nope), uris = session(shelves, calls)
    assert secret == not_served(shelves, "secret", "'documents'")
    assert nope.startswith(f"Table 'nope' is not in the database {shelves}, which holds")
    assert uris and all(uri.startswith("lancelot://documents/") for uri in uris)
