"""Each document's own metadata: front matter of any shape, HTML <meta>, PDF and Word properties, kept on its
rows as JSON with its tags, date and file type; odd values never fail a document."""

from __future__ import annotations

import json
from pathlib import Path

import docx
import lance
import pytest
from tests.support.documents import Line, docx_bytes, make_pdf
from tests.support.properties import with_info

from lancelot_indexer.chunking import metadata
from lancelot_indexer.chunking.metadata import Metadata
from lancelot_indexer.documents.collect import collect
from lancelot_indexer.pipeline import build
from lancelot_indexer.readers.html import extract as html_extract
from lancelot_indexer.readers.markdown import MAX_FRONT_MATTER
from lancelot_indexer.readers.markdown import extract as markdown_extract
from lancelot_indexer.readers.pdf import extract as pdf_extract
from lancelot_indexer.readers.word import extract as word_extract
from lancelot_schema import layout

ODD = """---
title: Odd types
date: 2024-13-45
tags: [Python, 3, 1.5, true, {nested: map}, [a, list], null, " Web  API "]
nested: {a: 1, b: [1, 2]}
count: 12
big: 123456789012345678901
ratio: .nan
blob: !!binary aGVsbG8=
set: !!set {x, y}
2024: a year as a key
empty: []
author: Ann Example
---
# Heading

Body text.
"""


def front(yaml_text: str) -> Metadata:
    return markdown_extract(f"---\n{yaml_text}\n---\n# Heading\n\nBody.\n", "page.md").metadata


def test_front_matter_of_odd_types_keeps_scalars_and_lists_of_scalars_and_never_fails():
    document = markdown_extract(ODD, "odd.md")
    assert document.title == "Odd types"
    assert [block.text for block in document.blocks] == ["Heading", "Body text."]
    assert document.metadata.fields == {
        "date": "2024-13-45",  # no such day: kept as written, the document undated
        "tags": ["Python", 3, 1.5, True, "Web  API"],
        "count": 12,
        "big": "123456789012345678901",  # beyond what a JavaScript number holds exactly
        "2024": "a year as a key",
        "author": "Ann Example",
    }
    assert document.metadata.tags == ("python", "3", "1.5", "true", "web api")
    assert document.metadata.date is None


@pytest.mark.parametrize(
    "yaml_text",
    [
        "date: !!timestamp 2024-99-01",  # an explicit date YAML cannot make
        "- a list\n- not a map",
        "just text",
        ": [bad yaml",
        "a: &a [1, 2]\nb: [*a, *a, *a]\nc: *b",  # an alias to nothing
        "? [1, 2]\n: a list as a key",
        "tags: " + "[" * 3000 + "]" * 3000,
    ],
)
def test_front_matter_that_is_no_usable_map_gives_no_metadata_and_the_page_is_read(yaml_text):
    document = markdown_extract(f"---\n{yaml_text}\n---\n# Heading\n\nBody.\n", "page.md")
    assert document.metadata == Metadata()
    assert [block.text for block in document.blocks] == ["Heading", "Body."]


def test_front_matter_longer_than_the_limit_is_not_read_but_the_page_is():
    text = "---\ntags: [kept]\nfiller: " + "x" * MAX_FRONT_MATTER + "\n---\n# Heading\n\nBody.\n"
    document = markdown_extract(text, "page.md")
    assert document.metadata == Metadata() and document.title == "Heading"
    assert [block.text for block in document.blocks] == ["Heading", "Body."]


def test_tags_come_from_tags_keywords_and_categories_split_at_commas_folded_and_distinct():
    found = front("tags: Python, Web; APIs\nKeywords: [python, ＡＰＩＳ]\ncategory: Guides\ntag: 7")
    assert found.tags == ("python", "web", "apis", "guides", "7")
    assert found.columns()[1] == "\x1fpython\x1fweb\x1fapis\x1fguides\x1f7\x1f"


def test_a_tag_can_never_hold_the_separator_nor_control_characters():
    assert layout.tag_key("a\x1fb\x00c\u0085d") == "a b c d"
    assert layout.tag_key("  \x1f ") == ""
    assert layout.tag_key("Ｐython") == "python" and layout.tag_key("x" * 500) == "x" * layout.MAX_TAG


@pytest.mark.parametrize(
    ("value", "day"),
    [
        ("2024-05-01", "2024-05-01"),
        ("2024-05-01T23:30:00+09:00", "2024-05-01"),  # the day where it was written
        ("2024-05-01 10:00:00 Z", "2024-05-01"),
        ("2024/5/1", "2024-05-01"),
        ("2024-05", "2024-05-01"),
        ("2024", "2024-01-01"),
        (2024, "2024-01-01"),
        ("D:20230102103000+01'00'", "2023-01-02"),
        ("Tue, 02 Jan 2024 10:00:00 GMT", "2024-01-02"),
        ("2024-02-30", None),
        ("2024-13", None),
        ("20240501", None),
        ("soon", None),
        ("0999-01-01", None),
        (True, None),
        (None, None),
    ],
)
def test_dates_read_as_days_or_not_at_all(value, day):
    assert metadata.date_of(value) == day


def test_the_date_is_the_first_of_date_published_and_created_that_is_one():
    assert front("created: 2020-01-01\npublished: not yet\ndate: someday").date == "2020-01-01"
    assert front("created: 2020-01-01\npublished: 2021-06-07").date == "2021-06-07"
    assert front("modified: 2020-01-01").date is None


def test_long_values_are_cut_and_a_document_keeps_at_most_so_much():
    found = front(f"summary: {'word ' * 500}\nmany: [{', '.join(map(str, range(300)))}]")
    assert len(found.fields["summary"]) == metadata.MAX_TEXT and found.fields["summary"].endswith("…")
    assert found.fields["many"] == list(range(metadata.MAX_ITEMS))
    lots = "\n".join(f"key{n}: {'v' * 900}" for n in range(40))
    meta = front(lots).columns()[0]
    assert meta is not None and len(meta) <= metadata.MAX_JSON
    assert len(front("\n".join(f"k{n}: {n}" for n in range(200))).fields) == metadata.MAX_FIELDS


def test_html_meta_gives_description_keywords_author_and_dates():
    page = (
        '<html><head><title>T</title><meta name="viewport" content="width=device-width">'
        '<meta name="Keywords" content="Bikes, Repair"><meta property="article:tag" content="tubes">'
        '<meta name="description" content="  How to   fix it "><meta name="author" content="Ann">'
        '<meta property="article:published_time" content="2023-04-05T10:00:00Z">'
        '<meta name="date" content="not a date"><meta name="description" content="second, ignored">'
        "</head><body><p>Text.</p></body></html>"
    )
    found = html_extract(page, "page.html").metadata
    assert found.fields == {
        "keywords": ["Bikes", "Repair", "tubes"],
        "description": "How to fix it",
        "author": "Ann",
        "published": "2023-04-05T10:00:00Z",
        "date": "not a date",
    }
    assert (found.tags, found.date) == (("bikes", "repair", "tubes"), "2023-04-05")


def test_pdf_document_information_is_its_metadata_with_dates_as_iso_text():
    pdf = with_info(
        make_pdf([[Line("Backups every night.", 11, 700)]]),
        {
            "Title": "Backups",
            "Author": "Ann",
            "Subject": "Operations",
            "Keywords": "backup; Postgres",
            "CreationDate": "D:20230102103000+01'00'",
            "ModDate": "D:2024",
            "Producer": "a tool",
        },
    )
    document = pdf_extract(pdf, "backups.pdf")
    assert document.title == "Backups"
    assert document.metadata.fields == {
        "author": "Ann",
        "subject": "Operations",
        "keywords": "backup; Postgres",
        "created": "2023-01-02T10:30:00+01:00",
        "modified": "2024-01-01",
    }
    assert (document.metadata.tags, document.metadata.date) == (("backup", "postgres"), "2023-01-02")


def test_a_pdf_without_document_information_has_none():
    assert pdf_extract(make_pdf([[Line("Text.", 11, 700)]]), "plain.pdf").metadata == Metadata()


def test_word_core_properties_are_its_metadata():
    from datetime import UTC, datetime

    document = docx.Document()
    properties = document.core_properties
    properties.author, properties.keywords, properties.category = "Bo", "replication, HA", "Operations"
    properties.comments, properties.subject = "How replicas follow.", "Databases"
    properties.created = datetime(2022, 3, 4, 5, 6, 7, tzinfo=UTC)
    document.add_heading("Replication", level=1)
    document.add_paragraph("Replicas follow the primary.")
    found = word_extract(docx_bytes(document), "replication.docx").metadata
    assert {key: found.fields[key] for key in ("author", "subject", "description", "keywords", "category")} == {
        "author": "Bo",
        "subject": "Databases",
        "description": "How replicas follow.",
        "keywords": "replication, HA",
        "category": "Operations",
    }
    assert found.fields["created"].startswith("2022-03-04T05:06:07")
    assert (found.tags, found.date) == (("replication", "ha", "operations"), "2022-03-04")


def docs_folder(root: Path) -> Path:
    root.mkdir()
    (root / "odd.md").write_text(ODD, encoding="utf-8")
    (root / "notes.txt").write_text("Plain notes, no metadata.\n", encoding="utf-8")
    (root / "Page.HTM").write_text(
        '<html><head><meta name="keywords" content="Bikes"><meta name="date" content="2020-02-02"></head>'
        "<body><p>Text.</p></body></html>",
        encoding="utf-8",
    )
    long_page = "---\ntags: [long]\ndate: 2021-01-01\n---\n" + "\n\n".join(f"Paragraph {n}. " * 40 for n in range(8))
    (root / "long.markdown").write_text(long_page, encoding="utf-8")
    return root


def test_every_row_of_a_document_carries_its_metadata_tags_date_and_file_type(tmp_path):
    collected = collect(docs_folder(tmp_path / "docs"), 600, workers=1)
    names = (layout.PATH, layout.META, layout.TAGS, layout.DATE, layout.FILE_TYPE)
    records = list(zip(*(collected.columns[name] for name in names), strict=True))
    rows = {path: values for path, *values in records}
    assert collected.columns[layout.PATH].count("long.markdown") > 1
    long_rows = {tuple(values) for path, *values in records if path == "long.markdown"}
    assert long_rows == {('{"tags": ["long"], "date": "2021-01-01"}', "\x1flong\x1f", "2021-01-01", "md")}
    assert rows["notes.txt"] == [None, None, None, "txt"]
    assert rows["Page.HTM"][1:] == ["\x1fbikes\x1f", "2020-02-02", "html"]
    meta, tags, date, kind = rows["odd.md"]
    assert json.loads(meta or "")["author"] == "Ann Example" and "title" not in json.loads(meta or "")
    assert (date, kind) == (None, "md") and tags == "\x1fpython\x1f3\x1f1.5\x1ftrue\x1fweb api\x1f"


def test_every_suffix_the_readers_take_has_a_file_type():
    from lancelot_indexer.readers.formats import SUFFIXES

    assert set(layout.FILE_TYPES) == set(SUFFIXES)


def table_rows(db: Path) -> dict[str, dict]:
    table = lance.dataset(str(db / "documents.lance")).to_table()
    return {row[layout.ID]: row for row in table.to_pylist()}


def test_a_rebuild_after_front_matter_changes_updates_the_rows_of_that_document_only(tmp_path):
    docs, db = docs_folder(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    before = table_rows(db)
    (docs / "odd.md").write_text(ODD.replace("author: Ann Example", "author: Bea"), encoding="utf-8")
    report = build(docs, db)
    assert report.read == 1
    after = table_rows(db)
    assert json.loads(after["odd.md#0"][layout.META])["author"] == "Bea" and after["odd.md#0"][layout.DATE] is None
    (docs / "odd.md").write_text(ODD.replace("date: 2024-13-45", "date: 2025-06-07"), encoding="utf-8")
    build(docs, db)
    assert table_rows(db)["odd.md#0"][layout.DATE] == "2025-06-07"
    assert {key: row for key, row in after.items() if not key.startswith("odd.md")} == {
        key: row for key, row in before.items() if not key.startswith("odd.md")
    }


def test_a_table_of_layout_4_is_rebuilt_with_the_metadata_columns_filled(tmp_path):
    docs, db = docs_folder(tmp_path / "docs"), tmp_path / "db"
    build(docs, db)
    expected = lance.dataset(str(db / "documents.lance")).to_table()
    old = expected.drop_columns([layout.PAGE, layout.META, layout.TAGS, layout.DATE, layout.FILE_TYPE])
    old = old.replace_schema_metadata({**(old.schema.metadata or {}), layout.META_LAYOUT_VERSION.encode(): b"4"})
    lance.write_dataset(old, str(db / "documents.lance"), mode="overwrite")
    assert build(docs, db).full == f"layout version 4 -> {layout.LAYOUT_VERSION}"
    rebuilt = lance.dataset(str(db / "documents.lance")).to_table()
    assert rebuilt.schema.names == list(layout.INDEXER_COLUMNS)
    assert rebuilt.sort_by(layout.ID).to_pylist() == expected.sort_by(layout.ID).to_pylist()
