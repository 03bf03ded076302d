"""The description's rule and the record beside a table, as both sides read them."""

from __future__ import annotations

import os

from lancelot_schema import about


def test_a_description_is_refused_when_empty_multi_line_or_too_long_with_what_to_do():
    assert about.problem("PostgreSQL 15 manual") is None
    assert "is empty" in (about.problem("   ") or "")
    assert "control character" in (about.problem("one\ntwo") or "")
    assert "control character" in (about.problem("bell\x07") or "")
    long = "x" * (about.MAX_DESCRIPTION + 1)
    assert f"keep it to {about.MAX_DESCRIPTION}" in (about.problem(long) or "")
    assert about.problem("x" * about.MAX_DESCRIPTION) is None


def test_cleaned_makes_one_bounded_line_of_any_text():
    assert about.cleaned(" Python\n3.11\t\x1b[31m docs ") == "Python 3.11 [31m docs"
    cut = about.cleaned("word " * 100)
    assert len(cut) == about.MAX_DESCRIPTION and cut.endswith("…")
    assert about.cleaned("a\u2028b") == "a b"


def test_a_record_reads_back_and_anything_else_is_none():
    told = about.About("PostgreSQL 15 manual", 1168, 9000, ["1.manifest", 10, 20])
    assert about.parsed(about.record(told)) == told
    for text in ("", "[]", "{}", '{"description": 1, "documents": 1, "passages": 1, "manifest": []}',
                 '{"description": "a", "documents": -1, "passages": 1, "manifest": []}',
                 '{"description": "a", "documents": true, "passages": 1, "manifest": []}', "x" * 5000):  # fmt: skip
        assert about.parsed(text) is None
    edited = '{"description": "two\\nlines", "documents": 1, "passages": 2, "manifest": []}'
    assert about.parsed(edited) == about.About("two lines", 1, 2, [])


def test_a_record_is_read_only_while_it_names_the_latest_manifest(tmp_path):
    table = tmp_path / "documents.lance"
    (table / "_versions").mkdir(parents=True)
    assert about.read(table) is None  # no manifest, no record
    (table / "_versions" / "18446744073709551614.manifest").write_bytes(b"one")
    latest = about.latest(table)
    assert latest is not None and latest[0] == "18446744073709551614.manifest"
    (table / about.ABOUT).write_text(about.record(about.About("Gearbox 1.0", 3, 7, latest)), encoding="utf-8")
    assert about.read(table) == about.About("Gearbox 1.0", 3, 7, latest)
    (table / "_versions" / "18446744073709551613.manifest").write_bytes(b"two")  # a newer version, written since
    assert about.read(table) is None
    os.remove(table / "_versions" / "18446744073709551613.manifest")
    assert about.read(table) is not None


def test_both_of_lances_manifest_names_give_the_version():
    assert about.version("18446744073709551614.manifest") == 1  # counting down from u64::MAX
    assert about.version("7.manifest") == 7
    assert about.version("latest.manifest") is None


def test_manifest_names_order_as_lance_writes_them():
    assert about.newest(["18446744073709551614.manifest", "18446744073709551613.manifest"]) == (
        "18446744073709551613.manifest"
    )
    assert about.newest(["1.manifest", "2.manifest"]) == "2.manifest"
    assert about.newest(["1.manifest", "x.manifest"]) is None
    assert about.newest([]) is None
