"""A table's description: `--description`, or derived; stamped, written beside the table, kept by rebuilds."""

from __future__ import annotations

import json

import lance
from click.testing import CliRunner

from lancelot_indexer.cli import main
from lancelot_indexer.pipeline import Options, build
from lancelot_schema import about, layout

from .documents.test_description import inventory


def stamped(db, table: str = "documents") -> str:
    metadata = lance.dataset(str(db / f"{table}.lance")).schema.metadata or {}
    return metadata[layout.META_DESCRIPTION.encode()].decode()


def told(db, table: str = "documents") -> about.About | None:
    return about.read(db / f"{table}.lance")


def pages(docs, titles: list[str]) -> None:
    docs.mkdir(parents=True, exist_ok=True)
    for number, title in enumerate(titles):
        (docs / f"page{number}.html").write_text(
            f"<html><head><title>{title}</title></head><body><p>Passage {number} about sprockets.</p></body></html>",
            encoding="utf-8",
        )


def test_a_sphinx_build_is_described_by_its_inventory_and_the_record_says_it_with_the_counts(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    pages(docs / "html", ["Intro", "Guide"])
    (docs / "html" / "objects.inv").write_bytes(inventory(b"Python", b"3.11"))
    report = build(docs, db)
    assert report.description == "Python 3.11" == stamped(db)
    assert told(db) == about.About("Python 3.11", 2, report.chunks, about.latest(db / "documents.lance") or [])


def test_a_plain_folder_is_described_by_its_titles_common_suffix_else_by_its_name(tmp_path):
    suffixed, db = tmp_path / "suffixed", tmp_path / "db"
    pages(suffixed, ["Tutorial — Python 3.11 documentation", "Library — Python 3.11 documentation", "Index"])
    assert build(suffixed, db).description == "Python 3.11 documentation" == stamped(db)
    plain = tmp_path / "gear-notes"
    pages(plain, ["Sprockets", "Chains"])
    assert build(plain, db, Options(table="plain")).description == "gear-notes" == stamped(db, "plain")
    assert (told(db, "plain") or about.About("", 0, 0, [])).description == "gear-notes"


def test_a_description_given_is_kept_by_no_op_and_incremental_rebuilds_and_changed_when_given_again(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    pages(docs, ["Sprockets", "Chains"])
    build(docs, db, Options(description="PostgreSQL 15 manual"))
    quiet = build(docs, db)  # nothing changed: no row written, the copy beside the table read without Lance
    assert (quiet.read, quiet.description, stamped(db)) == (0, "PostgreSQL 15 manual", "PostgreSQL 15 manual")
    pages(docs, ["Sprockets", "Chains", "Gears"])
    grown = build(docs, db)
    assert (grown.read, grown.kept, grown.full) == (1, 2, None)
    assert stamped(db) == "PostgreSQL 15 manual" and (told(db) or about.About("", 0, 0, [])).documents == 3
    before = lance.dataset(str(db / "documents.lance")).version
    renamed = build(docs, db, Options(description="PostgreSQL 16 manual"))
    # A metadata commit, no file read again: a description is no row setting.
    assert (renamed.read, renamed.full, renamed.description) == (0, None, "PostgreSQL 16 manual")
    assert lance.dataset(str(db / "documents.lance")).version == before + 1
    assert stamped(db) == "PostgreSQL 16 manual" == (told(db) or about.About("", 0, 0, [])).description
    copy = json.loads((db / "documents.lance" / "lancelot-sources.json").read_text(encoding="utf-8"))
    assert copy["description"] == "PostgreSQL 16 manual"
    assert build(docs, db).description == "PostgreSQL 16 manual"


def test_a_description_change_lands_when_the_table_itself_is_read(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    pages(docs, ["Sprockets", "Chains"])
    build(docs, db, Options(description="first"))
    (db / "documents.lance" / "lancelot-sources.json").unlink()  # no copy: the table tells what it holds
    report = build(docs, db, Options(description="second"))
    assert (report.read, report.description, stamped(db)) == (0, "second", "second")
    assert (told(db) or about.About("", 0, 0, [])).description == "second"


def test_the_summary_shows_the_description_and_a_bad_one_is_refused_with_what_to_do(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    pages(docs, ["Sprockets"])
    result = CliRunner().invoke(main, [str(docs), str(db), "--description", "Gear manual"])
    assert result.exit_code == 0, result.output
    assert "Described as: Gear manual (what the assistant is told; --description)." in result.output
    for bad, said in (("two\nlines", "control character"), ("x" * 201, "keep it to 200"), (" ", "is empty")):
        refused = CliRunner().invoke(main, [str(docs), str(db), "--description", bad])
        assert refused.exit_code == 2 and said in refused.output and "Traceback" not in refused.output
