"""The reStructuredText reader: titles from their underlines, directives' bodies kept, markup removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from lancelot_indexer.chunking.chunk import chunk
from lancelot_indexer.readers.rst import extract, plain

GUIDE = """\
.. _guide:

=========
The Guide
=========

An introduction with *emphasis*, **strong** words, ``literal code`` and a
`link <https://example.org>`_ to :func:`os.path.join` and :ref:`the rules <rules>`.

Installing
==========

.. note::
   Back up your data first.

.. toctree::
   :maxdepth: 2

   install/linux
   install/mac

Run this::

    make install
    make check

.. code-block:: python
   :linenos:

   import tool
   tool.run()

From source
-----------

.. function:: build(path, *, jobs=1)

   Build everything under *path*.

   .. versionadded:: 2.1

.. this is a comment
   over two lines

Configuring
===========

+----------+---------+
| Name     | Default |
+==========+=========+
| quiet    | off     |
+----------+---------+

Done [#]_.

.. [#] A footnote's text.
"""


def blocks():
    return extract(GUIDE, "guide.rst").blocks


def test_titles_come_from_their_underlines_with_levels_in_order_of_appearance():
    headings = [(block.level, block.text, block.lines) for block in blocks() if block.level]
    assert headings == [
        (1, "The Guide", (3, 5)),
        (2, "Installing", (10, 11)),
        (3, "From source", (33, 34)),
        (2, "Configuring", (45, 46)),
    ]
    assert extract(GUIDE, "guide.rst").title == "The Guide"


def test_the_heading_trail_follows_the_sections():
    headings = [piece.heading for piece in chunk(blocks(), 100)]
    assert "The Guide > Installing" in headings
    assert "The Guide > Installing > From source" in headings
    assert headings[-1] == "The Guide > Configuring"


def test_inline_markup_is_removed_and_a_reference_shows_its_title():
    intro = blocks()[1].text
    assert intro == (
        "An introduction with emphasis, strong words, literal code and a\nlink to os.path.join and the rules."
    )


def test_directives_keep_their_bodies_and_arguments_code_stays_whole_and_toctrees_and_comments_go():
    texts = [(block.whole, block.text) for block in blocks()]
    assert (False, "Back up your data first.") in texts
    assert (True, "make install\nmake check") in texts  # the literal block after "::"
    assert (False, "Run this:") in texts
    assert (True, "import tool\ntool.run()") in texts  # code-block, its options left out
    assert (False, "build(path, *, jobs=1)") in texts  # a Sphinx signature
    assert (False, "Build everything under path.") in texts
    assert (False, "New in version 2.1.") in texts
    joined = "\n".join(text for _, text in texts)
    for gone in ("install/linux", "maxdepth", "linenos", "this is a comment", "over two lines", "_guide"):
        assert gone not in joined


def test_tables_lose_their_borders_and_footnotes_keep_their_text():
    texts = [block.text for block in blocks()]
    assert "Name  Default\nquiet  off" in texts
    assert "Done." in texts
    assert "A footnote's text." in texts


def test_blocks_carry_the_lines_they_came_from():
    source = GUIDE.split("\n")
    for block in blocks():
        first, last = block.lines
        # The block's last word is on its lines (a version directive's text is made from its argument).
        assert block.text.split()[-1].strip("*:`.") in " ".join(source[first - 1 : last])


def test_a_file_without_titles_is_titled_by_its_name():
    assert extract("Just a paragraph.\n", "notes.rst").title == "notes.rst"


@pytest.mark.parametrize(
    ("marked", "shown"),
    [
        (":class:`~collections.OrderedDict`", "collections.OrderedDict"),
        ("`text`:emphasis:", "text"),
        ("see `Python <https://python.org>`__", "see Python"),
        ("a target_ and an_ident and __dunder__", "a target and an_ident and __dunder__"),
        ("|version| and \\*stars\\*", "version and *stars*"),
        ("``*args`` and ``:func:`x```", "*args and :func:`x`"),
        ("2 * 3 * 4", "2 * 3 * 4"),
    ],
)
def test_inline_markup(marked, shown):
    assert plain(marked) == shown


def test_the_python_manuals_sources_read_without_markup_left():
    sources = Path("/usr/share/doc/python3.11/html/_sources/library")
    page = sources / "functions.rst.txt"
    if not page.exists():
        pytest.skip(f"{page} is not installed (Debian's python3.11-doc)")
    document = extract(page.read_text(encoding="utf-8"), page.name)
    assert document.title == "Built-in Functions"
    prose = "\n".join(block.text for block in document.blocks if not block.whole)
    assert ":func:`" not in prose and ".. versionadded::" not in prose and "``" not in prose
    assert "Return the absolute value of a number." in prose
