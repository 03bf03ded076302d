"""The description derived from the documents: a build's own name, the titles' common suffix, DOCS's name."""

from __future__ import annotations

import zlib
from pathlib import Path

from tests.support import builds

from lancelot_indexer.documents import description
from lancelot_schema import about


def inventory(project: bytes, version: bytes) -> bytes:
    """An objects.inv as Sphinx writes it: four lines of text, then the zlib body."""
    head = b"# Sphinx inventory version 2\n# Project: " + project + b"\n# Version: " + version + b"\n"
    body = zlib.compress(b"a std:doc -1 a.html A\n")
    return head + b"# The remainder of this file is compressed using zlib.\n" + body


def test_a_sphinx_build_is_named_by_its_project_and_version_at_docs_or_one_folder_down(tmp_path):
    builds.sphinx(tmp_path / "top")
    assert description.built(tmp_path / "top") == "Gearbox 1.0"
    (tmp_path / "below" / "html").mkdir(parents=True)
    (tmp_path / "below" / "html" / "objects.inv").write_bytes(inventory(b"Python", b"3.11"))
    assert description.built(tmp_path / "below") == "Python 3.11"


def test_a_project_name_is_made_one_bounded_line(tmp_path):
    (tmp_path / "objects.inv").write_bytes(inventory(b"Evil\x1b[2J\xff" + b"x" * 400, b"1"))
    named = description.built(tmp_path)
    assert named is not None and "\x1b" not in named and len(named) <= about.MAX_DESCRIPTION


def test_a_mkdocs_build_is_named_by_the_title_of_its_404_page(tmp_path):
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "search_index.json").write_text('{"docs": []}', encoding="utf-8")
    (tmp_path / "404.html").write_text("<html><head><title>Flywheel Guide</title></head></html>", encoding="utf-8")
    assert description.built(tmp_path) == "Flywheel Guide"


def test_a_plain_folder_has_no_build_name(tmp_path):
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    assert description.built(tmp_path) is None
    assert description.folder_name(tmp_path / ".") == tmp_path.name
    assert description.folder_name(Path("/")) == "documents"


def test_the_suffix_most_titles_share_describes_them():
    titles = description.Titles()
    for title in ("Tutorial — Python 3.11 documentation", "Library — Python 3.11 documentation", "Index", None):
        titles.add(title)
    assert titles.common() == "Python 3.11 documentation"
    one = description.Titles()
    one.add("Only - Page")
    assert one.common() is None  # one title is no pattern
    few = description.Titles()
    for title in ("A | Site", "B | Site", "C", "D", "E"):
        few.add(title)
    assert few.common() is None  # two of five
