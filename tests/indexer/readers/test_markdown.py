import pytest

from lancelot_indexer.readers.markdown import extract, front_matter


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# The `foo` API\n", "The foo API"),
        ("Intro\n\nSetext *title*\n======\n", "Setext title"),
        ("```\n# in a fence\n```\n\n## Real [link](x)\n", "Real link"),
        ("---\ntitle: From front matter\n---\n# Heading\n", "From front matter"),
        ("---\nauthor: x\n---\n# Heading\n", "Heading"),
        ("---\n: [bad yaml\n---\n# Heading\n", "Heading"),
        ("no heading at all\n", "file.md"),
    ],
)
def test_title(text, title):
    assert extract(text, "file.md").title == title


def test_front_matter_is_not_part_of_the_text():
    data, body = front_matter("---\ntitle: T\ntags: [a]\n---\nBody\n")
    assert (data, body) == ({"title": "T", "tags": ["a"]}, "Body\n")
    assert extract("---\ntitle: T\n---\nBody\n", "f.md").title == "T"


def test_blocks_keep_fences_whole_and_mark_headings():
    blocks = extract("# A\n\npara one\nline two\n\n```py\nx = 1\n\ny = 2\n```\n\n## B\ntext\n", "f.md").blocks
    assert [(block.text, block.level, block.whole) for block in blocks] == [
        ("A", 1, False),
        ("para one\nline two", 0, False),
        ("```py\nx = 1\n\ny = 2\n```", 0, True),
        ("B", 2, False),
        ("text", 0, False),
    ]


def test_front_matter_nested_too_deep_to_read_is_ignored_not_fatal():
    deep = "---\ntitle: Deep\ntags: " + "[" * 2000 + "]" * 2000 + "\n---\n# Heading\n\nBody text.\n"
    document = extract(deep, "deep.md")
    assert document.title == "Heading"
    assert [block.text for block in document.blocks] == ["Heading", "Body text."]


def test_blocks_record_their_lines_in_the_file_front_matter_included():
    text = (
        "---\ntitle: T\ntags: [a]\n---\n\n"  # lines 1-5
        "Setext *title*\n==============\n\n"  # 6-8
        "First line\nsecond line\n\n"  # 9-11
        "```sh\nrun it\n\n```\n\n\n"  # 12-17
        "    indented code\n    more\n\n"  # 18-20
        "## Atx\ntext right under\n"  # 21-22
    )
    blocks = extract(text, "f.md").blocks
    assert [(block.text.split()[0], block.lines) for block in blocks] == [
        ("Setext", (6, 7)),
        ("First", (9, 10)),
        ("```sh", (12, 15)),
        ("indented", (18, 19)),
        ("Atx", (21, 21)),
        ("text", (22, 22)),
    ]
    assert [block.lines for block in extract(text.replace("\n", "\r\n"), "f.md").blocks] == [
        block.lines for block in blocks
    ]


def test_an_unclosed_fence_ends_at_its_last_non_blank_line():
    blocks = extract("Intro\n\n```\ncode\n\n\n", "f.md").blocks
    assert [block.lines for block in blocks] == [(1, 1), (3, 4)]
