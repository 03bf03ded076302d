from lancelot_indexer.chunking.chunk import Block, chunk, paragraphs, pieces


def test_paragraphs_are_packed_up_to_the_size_and_never_empty():
    blocks = paragraphs("one two\n\n\n   \nthree\n\n" + "four " * 10 + "\n\n\n")
    chunks = chunk(blocks, 30)
    assert [piece.text for piece in chunks] == ["one two\n\nthree", ("four " * 6).strip(), ("four " * 4).strip()]
    assert all(piece.text.strip() and len(piece.text) <= 30 for piece in chunks)


def test_a_long_paragraph_is_cut_at_the_last_space_before_the_limit():
    assert list(pieces("aaaa bbbb cccc dddd", 10)) == [(0, "aaaa bbbb"), (10, "cccc dddd")]
    assert [piece for _, piece in pieces("abcdefghijklmnop", 5)] == ["abcde", "fghij", "klmno", "p"]


def test_each_piece_comes_with_the_offset_of_its_text():
    text = "  one two\n   three four five\n six  "
    for offset, piece in pieces(text, 9):
        assert text[offset : offset + len(piece)] == piece


def test_a_code_fence_that_fits_is_never_split():
    fence = "```\n" + "\n".join(f"line {n}" for n in range(10)) + "\n```"
    blocks = [Block("x" * 50), Block(fence, whole=True), Block("after")]
    chunks = chunk(blocks, len(fence) + 10)
    assert any(fence in piece.text for piece in chunks)
    assert sum(piece.text.count("line 9") for piece in chunks) == 1


def test_a_fence_longer_than_a_chunk_is_cut_at_line_ends():
    fence = "\n".join(f"line {n}" for n in range(20))
    chunks = chunk([Block(fence, whole=True)], 30)
    assert all(len(piece.text) <= 30 for piece in chunks)
    assert "\n".join(piece.text for piece in chunks) == fence


def test_each_chunk_records_its_heading_trail_and_headings_start_chunks():
    blocks = [
        Block("Intro before any heading"),
        Block("Install", level=1),
        Block("Get it."),
        Block("Linux", level=2),
        Block("apt."),
        Block("macOS", level=2),
        Block("brew."),
        Block("Usage", level=1),
        Block("Run it."),
    ]
    assert [(piece.heading, piece.text) for piece in chunk(blocks, 1000)] == [
        ("", "Intro before any heading"),
        ("Install", "Install\n\nGet it."),
        ("Install > Linux", "Linux\n\napt."),
        ("Install > macOS", "macOS\n\nbrew."),
        ("Usage", "Usage\n\nRun it."),
    ]


def test_paragraphs_record_their_first_and_last_line():
    text = "\n\n  first\r\nstill first\r\n \t\r\n\n\nsecond  \n\nthird\nthird\nthird"
    assert [(block.text.split()[0], block.lines) for block in paragraphs(text)] == [
        ("first", (3, 4)),
        ("second", (8, 8)),
        ("third", (10, 12)),
    ]


def test_a_chunk_spans_from_the_line_its_text_starts_on_to_the_line_it_ends_on():
    blocks = [
        Block("Title", level=1, lines=(3, 4), anchor="top"),  # a setext heading: text and underline
        Block("one\ntwo", lines=(6, 7), anchor="a"),
        Block("three", lines=(9, 9), anchor="b"),
    ]
    assert [(piece.line_start, piece.line_end, piece.anchor) for piece in chunk(blocks, 1000)] == [(3, 9, "top")]
    assert [(piece.text, piece.line_start, piece.line_end, piece.anchor) for piece in chunk(blocks, 12)] == [
        ("Title", 3, 4, "top"),
        ("one\ntwo", 6, 7, "a"),
        ("three", 9, 9, "b"),
    ]


def test_every_piece_of_a_cut_block_gets_its_own_lines():
    source = [" ".join(f"w{n}.{k}" for k in range(n % 5 + 1)) for n in range(30)]  # lines 101 to 130 of a file
    text = "\n".join(source)
    for whole in (False, True):
        chunks = chunk([Block(text, whole=whole, lines=(101, 130), anchor="x")], 25)
        assert len(chunks) > 10
        for piece in chunks:
            assert piece.text.split()[0] in source[piece.line_start - 101].split()
            assert piece.text.split()[-1] in source[piece.line_end - 101].split()
            assert piece.line_end - piece.line_start == piece.text.count("\n")
            assert piece.anchor == "x"


def test_blocks_without_lines_give_chunks_without_lines():
    chunks = chunk([Block("a " * 40, anchor="id-1"), Block("b", anchor="id-2")], 30)
    assert {(piece.line_start, piece.line_end, piece.anchor) for piece in chunks} == {(None, None, "id-1")}
    assert chunks[-1].text == ("a " * 10).strip() + "\n\nb"  # starts in the first block
