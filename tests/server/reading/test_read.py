"""lancedb_read's body over real tables: neighbours, whole documents walked by their continuation at every
budget, older and foreign layouts, index use, and addresses that name nothing."""

from __future__ import annotations

import json

import lance
import lancedb
import pytest
from tests.server import corpus
from tests.server.reading.long_reads import joined, long_markdown, stored_texts, unbroken_paragraphs, walk

from lancelot_server.errors import InvalidRequest, TableNotFound
from lancelot_server.reading import documents
from lancelot_server.storage.store import describe

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("long_db")


@pytest.fixture(scope="module")
def long_db(tmp_path_factory):
    """`documents` (chunk size 1,200) and `wide` (chunk size 3,000) over a long manual and unbroken text."""
    root = tmp_path_factory.mktemp("long")
    docs = corpus.write_docs(
        root / "docs", {"manual.md": long_markdown(), "notes/unbroken.txt": unbroken_paragraphs(9, 2_600)}
    )
    db = root / "db"
    corpus.index(docs, db)
    corpus.index(docs, db, "--table", "wide", "--chunk-size", "3000")
    return db


def reader(tools):
    def read(arguments):
        arguments = dict(arguments)
        start = arguments.pop("from", None)
        reading = tools.read(start=start, **arguments)
        # What the tool sends as structured content is JSON: it must survive the trip unchanged.
        assert json.loads(json.dumps(reading.reply)) == reading.reply
        return reading.text, reading.reply

    return read


def test_an_id_reads_that_passage_with_one_before_and_two_after_in_document_order(long_db, make_tools):
    reply = make_tools(long_db).read(id="manual.md#5").reply
    assert [passage["number"] for passage in reply["passages"]] == [4, 5, 6, 7]
    assert [passage["id"] for passage in reply["passages"]] == [f"manual.md#{n}" for n in (4, 5, 6, 7)]
    texts = stored_texts(long_db, "documents", "manual.md")
    assert [passage["text"] for passage in reply["passages"]] == texts[4:8]
    assert reply["total"] == len(texts) and reply["order"] == "passage"
    assert (reply["source"], reply["title"], reply["table"]) == ("manual.md", "The long manual", "documents")
    assert reply["end"] == "window" and reply["next"] == {"source": "manual.md", "from": 8}
    assert all(passage["heading"].startswith("The long manual > Section") for passage in reply["passages"][1:])


def test_before_and_after_are_clipped_at_the_ends_of_the_document(long_db, make_tools):
    tools = make_tools(long_db)
    total = len(stored_texts(long_db, "documents", "manual.md"))
    first = tools.read(id="manual.md#0", before=5, after=0).reply
    assert [p["number"] for p in first["passages"]] == [0] and first["next"]["from"] == 1
    last = tools.read(id=f"manual.md#{total - 1}", before=0, after=20).reply
    assert [p["number"] for p in last["passages"]] == [total - 1]
    assert last["end"] == "document" and "next" not in last


def test_a_small_budget_keeps_the_passage_itself_and_says_what_was_left_out(long_db, make_tools):
    reading = make_tools(long_db).read(id="manual.md#6", before=3, after=3, budget=1_500)
    numbers = [p["number"] for p in reading.reply["passages"]]
    assert 6 in numbers and numbers == list(range(numbers[0], numbers[-1] + 1))
    assert len(reading.text) <= 1_500 and reading.reply["end"] == "budget"
    assert reading.reply["next"] == {"source": "manual.md", "from": numbers[-1] + 1}
    if numbers[0] > 3:
        assert 'read them with {"source": "manual.md", "from": 3}' in reading.text


BUDGETS = [500, 501, 777, 1_300, 4_000, 12_000, 100_000]


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize(("table", "source"), [("documents", "manual.md"), ("wide", "notes/unbroken.txt")])
def test_walking_a_document_by_its_continuation_returns_every_passage_exactly_once(
    long_db, make_tools, budget, table, source
):
    pieces = walk(reader(make_tools(long_db, LANCELOT_TABLES="wide")), {"source": source, "table": table}, budget)
    assert joined(pieces) == stored_texts(long_db, table, source)
    if budget < 3_000 and table == "wide":
        # Passages longer than the budget came in pieces, each cut at a word unless the word itself is too long.
        cut = [piece for piece in pieces if piece.get("cut")]
        assert cut and all(piece["text"][-1].isspace() or "xxxxxxxxxx" in piece["text"] for piece in cut)


def test_a_cut_passage_is_marked_and_continues_at_its_offset(long_db, make_tools):
    reading = make_tools(long_db, LANCELOT_TABLES="wide").read(source="notes/unbroken.txt", table="wide", budget=600)
    (piece,) = reading.reply["passages"]
    assert piece["cut"] is True and "offset" not in piece
    assert "## Passage 0 (cut)" in reading.text and " […]" in reading.text
    assert reading.reply["next"] == {
        "source": "notes/unbroken.txt",
        "table": "wide",
        "from": 0,
        "offset": len(piece["text"]),
    }


def test_an_older_table_without_locator_columns_is_read_by_its_ids(long_db, tmp_path, make_tools):
    # Layout 1: the columns and stamp lancelot-index wrote before passage numbers and locators existed.
    rows = lancedb.connect(str(long_db)).open_table("documents").to_arrow()
    old = rows.select(["id", "path", "title", "heading", "text", "text_hash"])
    old = old.replace_schema_metadata({"lancelot.layout_version": "1", "lancelot.chunk_size": "1200"})
    lance.write_dataset(old, str(tmp_path / "db" / "documents.lance"))
    tools = make_tools(tmp_path / "db")
    reply = tools.read(id="manual.md#3", before=1, after=1).reply
    assert [p["number"] for p in reply["passages"]] == [2, 3, 4] and reply["order"] == "passage"
    assert "lines" not in reply["passages"][0] and "note" not in reply
    pieces = walk(reader(tools), {"source": "manual.md"}, 4_000)
    assert joined(pieces) == stored_texts(long_db, "documents", "manual.md")


def test_an_anythingllm_table_groups_by_document_in_table_order_and_says_so(lancelot_db, make_tools):
    tools = make_tools(lancelot_db, LANCELOT_TABLES="workspace")
    uid = "00000000-0000-0000-0000-000000000002"
    reading = tools.read(id=uid, table="workspace")
    reply = reading.reply
    # The document is named by its url (an upload's source may be every upload's: test_anythingllm_documents.py).
    assert reply["source"] == "file:///uploads/chain.md" and reply["order"] == "table" and reply["total"] == 1
    assert reply["passages"][0]["id"] == uid
    assert (
        reply["passages"][0]["text"] == "Ticket DEC-0054 records the recall of faulty chain links."
    )  # header taken off
    assert "table order" in reply["note"] and "table order" in reading.text
    by_source = tools.read(source="link://https://example.com/hours", table="workspace").reply
    assert by_source["passages"][0]["text"] == "Open nine to six, weekdays."


def served(db, table):
    """The table as the server opens it (through Lance, not lancedb)."""
    from datetime import timedelta

    from lancelot_server.storage.lance_table import LanceTable

    return LanceTable.open(str(db / f"{table}.lance"), {}, timedelta(0))


def test_reading_a_document_looks_its_rows_up_through_the_path_index_alone(long_db):
    handle = served(long_db, "documents")
    table_layout = describe(handle.schema, "text", "documents")
    assert documents.indexed(table_layout)
    plan = documents.lookup(handle, "manual.md").explain_plan(True)
    # Not `passage` too: its `passage = 0` holds a row per document of the table, which grows with it.
    assert "ScalarIndexQuery" in plan and "path_idx" in plan and "passage_idx" not in plan, plan
    document, _ = documents.find(handle, table_layout, "documents", source="manual.md")
    assert document.row_ids is not None and sorted(document.row_ids) == list(range(document.total))
    window = document.passages(3, 5)
    assert [row[documents.NUMBER] for row in window] == [3, 4, 5]
    assert [row["id"] for row in window] == [f"manual.md#{number}" for number in (3, 4, 5)]


def test_the_catalog_lists_each_document_once_with_its_title(lancelot_db, long_db):
    for db, table, expected in [
        (long_db, "documents", [("manual.md", "The long manual"), ("notes/unbroken.txt", "unbroken.txt")]),
        (
            lancelot_db,
            "workspace",
            [
                ("file:///uploads/chain.md", "chain.md"),
                ("file:///uploads/puncture.md", "puncture.md"),
                ("https://example.com/hours", "shop"),
            ],
        ),
    ]:
        handle = served(db, table)
        assert documents.catalog(handle, describe(handle.schema, "text", table)) == expected


HOSTILE = [
    ({"source": "../guide/puncture.md"}, "source '../guide/puncture.md' is not a document of table 'documents'"),
    ({"source": "guide/%"}, "source 'guide/%' is not a document"),
    ({"source": "guide/puncture.md\x00"}, "source contains a NUL character"),
    ({"source": "' OR 1=1 --"}, "is not a document"),
    ({"source": "guide/puncture.md' OR path != '"}, "is not a document"),
    ({"source": " "}, "source is empty"),
    ({"id": "guide/puncture.md"}, "id 'guide/puncture.md' is not a passage id of table 'documents'"),
    ({"id": "guide/puncture.md#x"}, "is not a passage id"),
    ({"id": "guide/puncture.md#-1"}, "is not a passage id"),
    ({"id": "guide/puncture.md#99999999999"}, "is not a passage id"),
    ({"id": "guide/puncture.md#99"}, "names passage 99, but 'guide/puncture.md' has 3 passages (numbers 0 to 2)"),
    ({"id": "../../etc/passwd#0"}, "names the document '../../etc/passwd', which is not in table 'documents'"),
    ({"id": "x#1' OR '1'='1"}, "is not a passage id"),
    ({"id": "00000000-0000-0000-0000-000000000001"}, "is not a passage id of table 'documents'"),
    ({"id": "guide/puncture.md#0", "table": "workspace"}, "is not a passage of table 'workspace'"),
    ({"id": "a\x00#0"}, "id contains a NUL character"),
    ({"id": "guide/puncture.md#0", "source": "guide/puncture.md"}, "not both"),
    ({}, "Pass id (a hit's id: that passage and its neighbours) or source"),
    ({"source": "guide/puncture.md", "before": 1}, "before and after count passages around an id"),
    ({"id": "guide/puncture.md#0", "start": 1}, "from and offset continue a document read by source"),
    ({"source": "guide/puncture.md", "offset": 3}, "offset counts characters into the passage `from` names"),
    ({"source": "guide/puncture.md", "start": 3}, "from=3 is past the end of 'guide/puncture.md'"),
    ({"source": "guide/puncture.md", "start": 0, "offset": 100_000}, "offset=100,000 is past the end of passage 0"),
    ({"id": "guide/puncture.md#0", "after": 21}, "after must be between 0 and 20"),
    ({"source": "guide/puncture.md", "start": -1}, "from must be 0 or more"),
    ({"source": "guide/puncture.md", "budget": 499}, "budget must be between 500 and 100,000"),
]


@pytest.mark.parametrize(("arguments", "message"), HOSTILE)
def test_addresses_that_name_nothing_are_refused_naming_the_argument(lancelot_db, make_tools, arguments, message):
    with pytest.raises(InvalidRequest) as refused:
        make_tools(lancelot_db, LANCELOT_TABLES="workspace").read(**arguments)
    assert message in str(refused.value)


def test_a_missing_table_is_named(lancelot_db, make_tools):
    with pytest.raises(TableNotFound, match="Table 'nope' is not in the database"):
        make_tools(lancelot_db).read(source="a.md", table="nope")


def test_a_budget_too_small_for_a_long_source_name_says_what_would_fit(tmp_path, make_tools):
    name = "a" * 200 + "/" + "b" * 200 + ".txt"
    docs = corpus.write_docs(tmp_path / "docs", {name: "Some text.\n"})
    corpus.index(docs, tmp_path / "db")
    with pytest.raises(InvalidRequest, match=r"budget=500 is too small for .*Pass a budget of at least"):
        make_tools(tmp_path / "db").read(source=name, budget=500)
    assert make_tools(tmp_path / "db").read(source=name, budget=2_000).reply["passages"][0]["text"] == "Some text."


@pytest.mark.slow
def test_a_20_mb_document_is_walked_whole_by_its_continuation(tmp_path, make_tools):
    words = [f"w{number}" for number in range(5_000)]
    parts, size, number = ["# Big\n\n"], 0, 0
    while size < 20_000_000:
        line = (
            f"## Section {number}\n\n"
            if number % 50 == 0
            else " ".join(words[(number * 7 + i) % 5_000] for i in range(20 + number % 280)) + "\n\n"
        )
        parts.append(line)
        size += len(line)
        number += 1
    docs = corpus.write_docs(tmp_path / "docs", {"big.md": "".join(parts)})
    corpus.index(docs, tmp_path / "db")
    pieces = walk(reader(make_tools(tmp_path / "db")), {"source": "big.md"}, 100_000)
    texts = stored_texts(tmp_path / "db", "documents", "big.md")
    assert len(texts) > 15_000 and joined(pieces) == texts


def test_a_rebuild_between_the_count_and_the_passages_asks_for_a_fresh_read(long_db):
    from lancelot_server.errors import TableChanged
    from lancelot_server.reading import read

    handle = served(long_db, "documents")
    table_layout = describe(handle.schema, "text", "documents")
    document, _ = documents.find(handle, table_layout, "documents", source="manual.md")
    document.total += 3  # as if the count came from the table before a rebuild that shortened the page
    with pytest.raises(TableChanged, match=r"was rebuilt while 'manual\.md' was being read; read it again"):
        read.onward(document, document.total - 10, 0, 100_000)
    with pytest.raises(TableChanged):
        read.around(document, document.total - 4, 1, 2, 12_000)
