"""Which reader reads a file."""

from __future__ import annotations

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
