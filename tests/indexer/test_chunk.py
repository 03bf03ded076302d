from lancelot_indexer.chunk import Block, chunk, paragraphs, pieces


def test_paragraphs_are_packed_up_to_the_size_and_never_empty():
    blocks = paragraphs("one two\n\n\n   \nthree\n\n" + "four " * 10 + "\n\n\n")
    chunks = chunk(blocks, 30)
    assert [piece.text for piece in chunks] == ["one two\n\nthree", ("four " * 6).strip(), ("four " * 4).strip()]
    assert all(piece.text.strip() and len(piece.text) <= 30 for piece in chunks)


def test_a_long_paragraph_is_cut_at_the_last_space_before_the_limit():
    assert list(pieces("aaaa bbbb cccc dddd", 10)) == ["aaaa bbbb", "cccc dddd"]
    assert list(pieces("abcdefghijklmnop", 5)) == ["abcde", "fghij", "klmno", "p"]


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
