from lancelot_indexer.html import extract


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
