import re
from pathlib import Path

import pytest

from lancelot_indexer.chunking.chunk import Block, chunk
from lancelot_indexer.readers.html import extract


def texts(html: str) -> list[str]:
    return [block.text for block in extract(html, "f.html").blocks]


def test_hidden_elements_are_removed_and_entities_decoded():
    html = (
        "<head><style>p {color: red}</style></head><body><p>Fish &amp; chips&nbsp;&eacute;</p>"
        "<script>alert(1)</script><noscript>enable js</noscript><template><p>tpl</p></template>"
        "<svg><text>drawn</text></svg></body>"
    )
    assert texts(html) == ["Fish & chips é"]  # no-break spaces collapse like any other


def test_site_navigation_and_permalink_marks_are_not_document_text():
    html = (
        "<body><nav><a href='/'>Home</a> <a href='/docs'>Docs</a></nav>"
        "<div class='related' role='navigation'><a href='prev.html'>previous</a></div>"
        "<div class='navheader'><table><tr><td>Prev</td><td>Up</td><td>Next</td></tr></table></div>"
        "<h1>Vacuum<a class='headerlink' href='#vacuum' title='Permalink to this heading'>¶</a></h1>"
        "<p>Reclaims storage. See <a href='other.html'>the other page</a>.</p>"
        "<div class='navfooter'>Prev: UPDATE Next: VALUES</div></body>"
    )
    document = extract(html, "vacuum.html")
    assert document.title == "Vacuum"
    assert [(block.text, block.level) for block in document.blocks] == [
        ("Vacuum", 1),
        ("Reclaims storage. See the other page.", 0),
    ]


def test_block_elements_become_paragraphs_and_br_a_line_break():
    html = (
        "<div>one <b>bold</b> word</div><ul><li>first</li><li>second</li></ul>"
        "<blockquote>quoted</blockquote><table><tr><td>a</td><td>b</td></tr></table>x<br>y"
    )
    assert texts(html) == ["one bold word", "first", "second", "quoted", "a b", "x\ny"]


def test_paragraphs_are_blocks_like_any_reader_makes():
    # html.py makes them past NamedTuple's __new__, for speed: they must still be whole Blocks.
    blocks = extract("<h2 id='s'>Head</h2><p>one<br>two</p><pre>code</pre>", "f.html").blocks
    assert blocks == [
        Block("Head", level=2, anchor="s"),
        Block("one\ntwo", anchor="s"),
        Block("code", whole=True, anchor="s"),
    ]
    assert all(type(block) is Block and len(block) == len(Block._fields) for block in blocks)


def test_pre_keeps_its_lines_and_indentation():
    blocks = extract("<p>before</p><pre>def f():\n    return 1\n</pre>", "f.html").blocks
    assert blocks[1].text == "def f():\n    return 1"
    assert blocks[1].whole


def test_headings_are_marked_with_their_level():
    blocks = extract("<h1>Top</h1><p>a</p><h3>Deep <i>one</i></h3>", "f.html").blocks
    assert [(block.text, block.level) for block in blocks] == [("Top", 1), ("a", 0), ("Deep one", 3)]


def test_title_is_the_title_element_else_the_first_h1_else_the_file_name():
    assert extract("<title> The  title </title><h1>H</h1>", "f.html").title == "The title"
    assert extract("<title> </title><h2>no</h2><h1>First <b>h1</b></h1><h1>x</h1>", "f.html").title == "First h1"
    assert extract("<p>nothing</p>", "page.html").title == "page.html"


def test_malformed_markup_still_gives_its_text():
    assert texts("<h1>Open <b>bold</h1><p>one<div>two</p></span></i>") == ["Open bold", "one", "two"]


def test_a_docbook_note_title_is_part_of_the_box_not_a_section_heading():
    html = (
        "<h2>Routine Vacuuming</h2><p>Before the box.</p>"
        "<div class='note'><h3 class='title'>Note</h3><p>Inside the box.</p></div>"
        "<p>After the box, still routine vacuuming.</p>"
    )
    blocks = extract(html, "routine.html").blocks
    assert [(block.text, block.level) for block in blocks] == [
        ("Routine Vacuuming", 2),
        ("Before the box.", 0),
        ("Note", 0),
        ("Inside the box.", 0),
        ("After the box, still routine vacuuming.", 0),
    ]


# Ids on Sphinx's sections, index targets and signatures, DocBook's divisions and index terms, an old
# <a name>, ids inside a `pre` and in the middle of a paragraph, and ids in removed elements. Every block
# starts with a word found nowhere else in the page.
PAGE = """<html><head><title>Widgets</title><script id="boot">var x = 1;</script></head><body>
<nav id="menu"><a id="home" href="/">Home</a></nav>
<p>Alpha comes before any id.</p>
<section id="installing">
<h1>Bravo installing<a class="headerlink" href="#installing">¶</a></h1>
<p><span class="target" id="index-0"></span>Charlie is indexed right here.</p>
<p>Delta has <span id="inline-term">an inline target</span> in its middle.</p>
<p>Echo follows the inline target.</p>
<dl class="py function"><dt class="sig" id="widgets.make">Foxtrot make(kind)</dt><dd><p>Golf builds one.</p></dd></dl>
<pre id="example">Hotel = make("x")
<span id="in-code">India</span> = 2</pre>
<p>Juliet after the code.</p>
</section>
<div class="sect1" id="routine"><div class="titlepage"><h2 class="title">Kilo routine</h2></div>
<p>Lima <a id="id-1.2.3" class="indexterm"></a>with a DocBook index term.</p>
<p><a name="old-style"></a>Mike under an old name anchor.</p>
<script id="late">var y;</script>
<p>November <b>last</b>.</p></div>
</body></html>"""
_REMOVED = re.compile(r"<(script|nav)\b.*?</\1>", re.DOTALL)
_ANCHOR_ATTRIBUTE = re.compile(r'\sid="([^"]+)"|<a\s+name="([^"]+)"')


def nearest_anchor_before(page: str, words: str) -> str | None:
    """The last id (or <a name>) written before `words` in the page, scripts and navigation cut out."""
    content = _REMOVED.sub("", page)
    found = [match.group(1) or match.group(2) for match in _ANCHOR_ATTRIBUTE.finditer(content, 0, content.index(words))]
    return found[-1] if found else None


def test_each_block_is_anchored_at_the_nearest_id_that_starts_before_its_text():
    blocks = extract(PAGE, "widgets.html").blocks
    for block in blocks:
        assert block.anchor == nearest_anchor_before(PAGE, block.text.split()[0]), block.text
        assert block.lines is None
    assert [(block.text.split()[0], block.anchor) for block in blocks] == [
        ("Alpha", None),
        ("Bravo", "installing"),
        ("Charlie", "index-0"),
        ("Delta", "index-0"),
        ("Echo", "inline-term"),  # an id in the middle of a block counts from the next block on
        ("Foxtrot", "widgets.make"),
        ("Golf", "widgets.make"),
        ("Hotel", "example"),
        ("Juliet", "in-code"),
        ("Kilo", "routine"),
        ("Lima", "routine"),
        ("Mike", "old-style"),
        ("November", "old-style"),  # the script's id went with the script
    ]
    assert "\ue006" not in "".join(block.text for block in blocks)
    assert blocks[7].text == 'Hotel = make("x")\nIndia = 2'


def test_each_passage_is_anchored_where_its_text_starts():
    passages = chunk(extract(PAGE, "widgets.html").blocks, 70)
    assert len(passages) > 5
    for passage in passages:
        assert passage.anchor == nearest_anchor_before(PAGE, passage.text.split()[0]), passage.text
        assert (passage.line_start, passage.line_end) == (None, None)


def test_a_private_use_character_of_the_page_is_kept():
    blocks = extract("<p>icon \ue006 here</p><p id='x'>next \ue006\ue007 one</p>", "f.html").blocks
    assert [(block.text, block.anchor) for block in blocks] == [
        ("icon \ue006 here", None),
        ("next \ue006\ue007 one", "x"),
    ]


@pytest.mark.parametrize(
    "page",
    [
        Path("/usr/share/doc/python3.11/html/library/os.html"),  # Sphinx (python3.11-doc)
        Path("/usr/share/doc/postgresql-doc-15/html/sql-createtable.html"),  # DocBook (postgresql-doc-15)
    ],
    ids=lambda page: page.name,
)
def test_every_anchor_of_a_real_manual_page_is_an_id_of_that_page(page):
    if not page.exists():
        pytest.skip(f"{page} is not installed")
    html = page.read_text(encoding="utf-8")
    ids = set(re.findall(r'\sid="([^"]+)"', html))
    passages = chunk(extract(html, page.name).blocks, 1000)
    anchors = [passage.anchor for passage in passages]
    assert len(passages) > 50
    assert {anchor for anchor in anchors if anchor is not None} <= ids
    assert anchors.count(None) <= 2  # at most the title before the first section


def test_only_a_links_land_by_name_and_empty_ids_are_no_anchors():
    html = "<p id=''>one</p><form><input id='' name='q'></form><p>two</p><a name='n'></a><p>three</p>"
    assert [(block.text, block.anchor) for block in extract(html, "f.html").blocks] == [
        ("one", None),
        ("two", None),
        ("three", "n"),
    ]
