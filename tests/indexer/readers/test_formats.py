"""Which reader reads a file, and which files a rebuild reads again when a reader changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lancelot_indexer.readers import formats


@pytest.mark.parametrize(
    ("name", "suffix", "module"),
    [
        ("install.rst.txt", ".rst.txt", "lancelot_indexer.readers.rst"),
        ("INSTALL.RST.TXT", ".rst.txt", "lancelot_indexer.readers.rst"),
        ("notes.txt", ".txt", "lancelot_indexer.readers.plain"),
        ("release.1.2.txt", ".txt", "lancelot_indexer.readers.plain"),
        ("data.json.txt", ".txt", "lancelot_indexer.readers.plain"),
        ("guide.md", ".md", "lancelot_indexer.readers.markdown"),
        (".txt", "", "lancelot_indexer.readers.plain"),
    ],
)
def test_a_format_is_named_by_the_last_suffix_or_the_last_two(name, suffix, module):
    assert formats.suffix_of(name) == suffix
    assert formats.format_of(Path(name)).module == module


def test_a_table_stamped_before_readers_had_revisions_reads_again_the_formats_that_changed_since():
    changed = formats.changed_since("")
    reread = {name for name in ("a.md", "b.txt", "c.rst", "d.rst.txt", "e.html", "f.pdf", "g.docx") if changed(name)}
    assert reread == {name for name in ("d.rst.txt", "e.html", "f.pdf", "g.docx")}  # .rst.txt: read as text before


def test_a_table_stamped_now_reads_nothing_again_and_an_unreadable_stamp_everything():
    assert not any(formats.changed_since(formats.stamp())(name) for name in ("a.md", "b.pdf", "c/d.rst.txt"))
    assert all(formats.changed_since("not json")(name) for name in ("a.md", "b.pdf"))
    assert all(formats.changed_since("[1]")(name) for name in ("a.md", "b.pdf"))


def test_the_stamp_names_every_suffixs_reader_and_revision():
    stamped = json.loads(formats.stamp())
    assert stamped.keys() == formats.SUFFIXES
    assert stamped[".rst.txt"] == stamped[".rst"] == f"rst {formats.RST.revision}"
    assert stamped[".pdf"].startswith("pdf ")
