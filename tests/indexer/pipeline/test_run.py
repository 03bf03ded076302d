import hashlib
import re
from datetime import timedelta

import lancedb
import pyarrow as pa
import pytest
from tests.indexer.conftest import write_big_text

from lancelot_indexer.documents.walk import Duplicate
from lancelot_indexer.errors import DocsError, EmptyDocsError
from lancelot_indexer.pipeline import Options, build
from lancelot_schema import layout


def rows(db, table="documents"):
    return {row["id"]: row for row in lancedb.connect(db).open_table(table).to_arrow().to_pylist()}


def fts(db, query, table="documents"):
    return [
        row["id"]
        for row in lancedb.connect(db).open_table(table).search(query, query_type="fts", fts_columns="text").to_list()
    ]


def test_the_fixture_folder_becomes_rows_that_follow_every_rule(docs, tmp_path):
    db = tmp_path / "db"
    report = build(docs, db)
    table = rows(db)
    paths = sorted({row["path"] for row in table.values()})
    assert paths == [
        "Page.HTM",
        "UPPER.TXT",
        "bom.txt",
        "broken.html",
        "guide/api.markdown",
        "guide/install.md",
        "legacy.txt",
        "long.txt",
        "wide.txt",
    ]
    assert report.duplicates == [Duplicate("link-inside.md", "guide/install.md")]  # a link to a file indexed
    assert {item.relative: item.reason for item in report.skipped} == {
        "binary.txt": "binary file (contains NUL bytes)",
        "dangling.md": "broken or looping symlink",
        "empty.md": "no text",
        "guide/loop": "symlink loop",
        "link-outside.md": "symlink leads outside the documents folder",
    }
    assert report.windows_1252 == ["legacy.txt"]
    assert report.documents == len(paths)
    assert report.chunks == len(table)
    assert table["legacy.txt#0"]["text"] == "Smart quotes \u201chere\u201d and café."
    assert table["wide.txt#0"]["text"] == "Sixteen-bit text: naïve."
    assert table["bom.txt#0"]["text"] == "Byte order mark, UTF-8."
    assert table["Page.HTM#0"]["title"] == "Upper & page"
    assert "hidden" not in table["Page.HTM#0"]["text"]
    assert table["UPPER.TXT#0"]["title"] == "UPPER.TXT"
    assert table["guide/api.markdown#0"]["title"] == "The foo API"
    assert table["broken.html#0"]["title"] == "Malformed page"
    assert table["broken.html#0"]["text"] == "Malformed page\n\nfirst unclosed\n\nsecond\n\nline one\n  line two"
    install = [table[f"guide/install.md#{n}"] for n in range(3)]
    assert {row["title"] for row in install} == {"Installing Lancelot"}
    assert [row["heading"] for row in install] == ["Install", "Install > Linux", "Install > macOS"]
    assert "```\n# not a heading\npip install lancelot\n```" in install[1]["text"]
    long_chunks = [row["text"] for key, row in sorted(table.items()) if row["path"] == "long.txt"]
    assert all(0 < len(text) <= layout.DEFAULT_CHUNK_SIZE for text in long_chunks)
    assert " ".join(long_chunks).split() == [f"word{n}" for n in range(600)]
    for row in table.values():
        assert row["id"].startswith(row["path"] + "#")
        assert row["text_hash"] == hashlib.sha256(row["text"].encode()).hexdigest()


def test_the_table_is_stamped_and_has_a_stemmed_folded_positional_fts_index(docs, tmp_path):
    db = tmp_path / "db"
    build(docs, db, Options(chunk_size=500))
    table = lancedb.connect(db).open_table("documents")
    stamp = layout.decode_metadata(table.schema.metadata)
    assert stamp["layout_version"] == layout.LAYOUT_VERSION
    assert stamp["chunk_size"] == "500"
    assert stamp["indexed_at"]
    assert table.schema.names == list(layout.INDEXER_COLUMNS)
    assert fts(db, "shouted") == ["UPPER.TXT#0"]  # stemmed: "Shouting file name."
    assert set(fts(db, "CAFE")) == {"Page.HTM#0", "legacy.txt#0"}  # lower-cased and folded: "café"
    assert fts(db, '"pip install"') == ["guide/install.md#1"]
    assert fts(db, '"install pip"') == []  # positions make phrase order count


def test_a_20_mb_text_file_is_indexed(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_big_text(docs / "big.txt")
    report = build(docs, tmp_path / "db", Options(fts=False))
    assert report.documents == 1
    assert report.chunks > 20 * 1024 * 1024 // layout.DEFAULT_CHUNK_SIZE
    assert not report.fts


def test_an_empty_folder_is_an_error_and_leaves_the_table_untouched(docs, tmp_path):
    db = tmp_path / "db"
    build(docs, db)
    before = rows(db)
    version = lancedb.connect(db).open_table("documents").version
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".hidden.md").write_text("# hidden\n", encoding="utf-8")
    with pytest.raises(EmptyDocsError, match="left as it was"):
        build(empty, db)
    assert rows(db) == before
    assert lancedb.connect(db).open_table("documents").version == version


def test_allow_empty_empties_the_table(docs, tmp_path):
    db = tmp_path / "db"
    build(docs, db)
    empty = tmp_path / "empty"
    empty.mkdir()
    report = build(empty, db, Options(allow_empty=True))
    assert report.chunks == 0
    assert rows(db) == {}


def test_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(DocsError, match="does not exist"):
        build(tmp_path / "nope", tmp_path / "db")


def test_a_rebuild_merges_changes_and_search_covers_new_rows(docs, tmp_path):
    db = tmp_path / "db"
    assert build(docs, db).strategy == "create"
    (docs / "UPPER.TXT").unlink()
    (docs / "new.md").write_text("# New\n\nA freshly written zeppelin page.\n", encoding="utf-8")
    report = build(docs, db, Options(keep_versions=timedelta(0)))
    assert report.strategy == "merge"
    table = rows(db)
    assert "UPPER.TXT#0" not in table
    assert table["new.md#0"]["text"] == "New\n\nA freshly written zeppelin page."
    assert fts(db, "zeppelin") == ["new.md#0"]
    stats = lancedb.connect(db).open_table("documents").index_stats("text_idx")
    assert stats.num_unindexed_rows == 0


def test_a_table_without_text_hash_is_evolved_and_keeps_its_index(docs, tmp_path):
    db = tmp_path / "db"
    old = pa.table({"id": ["x#0"], "path": ["x"], "title": ["x"], "heading": [""], "text": ["old words"]})
    table = lancedb.connect(db).create_table("documents", old)
    table.create_index("text", config=__import__("lancedb").index.FTS(with_position=True))
    report = build(docs, db)
    assert report.strategy == "merge"
    table = lancedb.connect(db).open_table("documents")
    assert table.schema.names == list(layout.INDEXER_COLUMNS)
    assert all(row["text_hash"] for row in rows(db).values())
    assert "x#0" not in rows(db)
    assert fts(db, "brew") == ["guide/install.md#2"]


def test_a_foreign_layout_is_overwritten(docs, tmp_path):
    db = tmp_path / "db"
    lancedb.connect(db).create_table("documents", pa.table({"id": [1], "vector": [[0.1, 0.2]]}))
    report = build(docs, db)
    assert report.strategy == "overwrite"
    assert lancedb.connect(db).open_table("documents").schema.names == list(layout.INDEXER_COLUMNS)
    assert fts(db, "brew") == ["guide/install.md#2"]


def test_no_fts_drops_an_existing_index(docs, tmp_path):
    db = tmp_path / "db"
    build(docs, db)
    build(docs, db, Options(fts=False))
    indexes = lancedb.connect(db).open_table("documents").list_indices()
    assert sorted(index.index_type for index in indexes) == ["BTree", "BTree", "Bitmap"]  # no full-text index left


def test_an_index_with_other_tokenizer_options_is_rebuilt_with_ours(docs, tmp_path):
    db = tmp_path / "db"
    build(docs, db)
    table = lancedb.connect(db).open_table("documents")
    table.create_index("text", config=lancedb.index.FTS(with_position=True, stem=False), replace=True)
    assert fts(db, "shouted") == []  # "Shouting file name." without stemming
    assert build(docs, db).strategy == "merge"
    (index,) = [
        index for index in lancedb.connect(db).open_table("documents").list_indices() if index.columns == ["text"]
    ]
    assert (index.name, index.index_details["stem"], index.index_details["with_position"]) == ("text_idx", True, True)
    assert fts(db, "shouted") == ["UPPER.TXT#0"]


# A guide as people write them: front matter, an intro, a setext heading, a fenced block longer than a
# chunk, a long paragraph, an indented block and ATX headings, saved with Windows line endings.
GUIDE = "\r\n".join(
    [
        "---",
        "title: Widgets guide",
        "tags: [guide, widgets]",
        "---",
        "",
        "Widgets are small parts you put together. This intro",
        "sits before any heading.",
        "",
        "Installing widgets",
        "==================",
        "",
        "Run the installer; it checks the prerequisites first.",
        "",
        "```sh",
        *(f"widgets install part-{n} --verbose" for n in range(12)),
        "```",
        "",
        "## Configuring *them*",
        "",
        *(f"Setting {n} is read from the file when option{n} is given; otherwise" for n in range(15)),
        "the default applies.",
        "",
        "    indented example",
        "    second line",
        "",
        "### Last words",
        "Everything ends here.",
        "",
    ]
)
NOTES = "\r\n".join(
    [
        "",
        "Notes on widgets.",
        "",
        "",
        *(f"Remark {n} says that remark{n} matters a great deal" for n in range(20)),
        "   ",
        "Final remark.",
    ]
)


def on_line(line: str, part: str, *, first: bool) -> bool:
    """Whether the first (or last) four words of `part` are on `line`, Markdown's emphasis marks aside."""
    wanted = re.findall(r"\w+", part)
    if not wanted:
        return part.strip() == line.strip()  # a closing code fence
    wanted = wanted[:4] if first else wanted[-4:]
    found = re.findall(r"\w+", line)
    return any(found[n : n + len(wanted)] == wanted for n in range(len(found)))


def test_every_passage_records_the_lines_of_the_file_it_starts_and_ends_on(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_bytes(GUIDE.encode())
    (docs / "notes.txt").write_bytes(NOTES.encode())
    build(docs, tmp_path / "db", Options(chunk_size=200, fts=False))
    table = rows(tmp_path / "db")
    for name, expected in (("guide.md", 10), ("notes.txt", 5)):
        # An editor's line numbers: a line ends at "\n" (a CRLF file counts the same).
        lines = (docs / name).read_bytes().decode().split("\n")
        passages = sorted((row for row in table.values() if row["path"] == name), key=lambda row: row["passage"])
        assert len(passages) >= expected
        for row in passages:
            text_lines = row["text"].split("\n")
            assert on_line(lines[row["line_start"] - 1], text_lines[0], first=True), row
            assert on_line(lines[row["line_end"] - 1], text_lines[-1], first=False), row
            assert row["anchor"] is None
        starts = [row["line_start"] for row in passages]
        assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_html_passages_have_anchors_and_no_lines(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text(
        "<p>Before.</p><section id='usage'><h1>Usage</h1><p>Run it.</p></section>"
        "<section id='faq'><h1>FAQ</h1><p>Ask.</p></section>",
        encoding="utf-8",
    )
    build(docs, tmp_path / "db", Options(fts=False))
    assert sorted(
        (row["text"], row["anchor"], row["line_start"], row["line_end"]) for row in rows(tmp_path / "db").values()
    ) == [
        ("Before.", None, None, None),
        ("FAQ\n\nAsk.", "faq", None, None),
        ("Usage\n\nRun it.", "usage", None, None),
    ]
