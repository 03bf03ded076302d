"""The lancedb_query block: header, one section per passage, whole passages left out past the budget."""

from __future__ import annotations

from lancelot_server.reading.markdown import render
from lancelot_server.search.filters import MAX_TAGS, Filters


def hit(number, text, **fields):
    base = {"id": f"doc.md#{number}", "title": "Doc", "source": "doc.md", "heading": None, "score": 1.0}
    return {**base, "text": text, "metadata": {}, **fields}


def reply(hits, **fields):
    base = {"query": "chain", "mode": "auto", "searchType": "text", "textMatch": "bm25", "table": "documents"}
    return {**base, **fields, "count": len(hits), "hits": hits}


def test_the_header_names_mode_search_type_and_query_then_each_chunk_follows():
    block = render(reply([hit(0, "First text.", heading="Intro"), hit(1, "Second text.")]), 12_000)
    assert block.startswith("# Search results from `documents`\n")
    assert "- mode: auto\n- search type: text (bm25)\n- query: chain\n" in block
    assert (
        block.index("## 1. Doc") < block.index("First text.") < block.index("## 2. Doc") < block.index("Second text.")
    )
    assert "Source: doc.md\nSection: Intro\n" in block
    assert "left out" not in block


def test_a_note_is_shown():
    block = render(reply([], note="no API key; used text search instead.", searchType="text"), 12_000)
    assert "- note: no API key; used text search instead." in block
    assert "No passages matched." in block


def test_chunks_past_the_budget_are_left_out_whole_and_counted():
    hits = [hit(0, "a" * 300), hit(1, "b" * 900), hit(2, "c" * 300), hit(3, "d" * 900)]
    block = render(reply(hits), 1_000)
    assert len(block) <= 1_000
    assert "a" * 300 in block and "c" * 300 in block  # a smaller later chunk still fits
    assert "b" * 10 not in block and "d" * 10 not in block  # never cut
    assert block.endswith("_2 more passages left out to stay within the 1,000-character budget._\n")


def test_one_chunk_left_out_is_singular():
    assert render(reply([hit(0, "short"), hit(1, "x" * 2_000)]), 1_000).endswith(
        "_1 more passage left out to stay within the 1,000-character budget._\n"
    )


def test_a_first_chunk_longer_than_the_budget_is_cut_at_a_word_and_names_the_id_that_reads_it_whole():
    words = " ".join(f"word{number}" for number in range(300))  # 2,389 characters
    block = render(reply([hit(0, words), hit(1, "second")]), 500)
    assert len(block) <= 500
    shown = block.split("Score: 1.0\n\n")[1].split(" […]")[0]
    assert len(shown) > 80 and words.startswith(shown + " ")  # a whole number of words
    assert "[…] (cut to fit; lancedb_read with id doc.md#0 reads it whole)" in block
    assert "second" not in block and block.endswith(
        "_1 more passage left out to stay within the 500-character budget._\n"
    )


def test_locators_and_links_are_shown_for_citing():
    located = hit(0, "Text.", lines=[3, 9], url="https://docs.example.com/doc.html#L3")
    block = render(reply([located, hit(1, "More.", source="page.html", anchor="intro", title="A [b]")]), 12_000)
    assert "## 1. [Doc](https://docs.example.com/doc.html#L3)\n" in block
    assert "Source: doc.md, lines 3–9\n" in block and "Id: doc.md#0\n" in block
    assert "## 2. A [b]\n" in block and "Source: page.html#intro\n" in block


def test_the_smallest_budget_holds_even_with_the_longest_query_and_note():
    block = render(reply([hit(0, "x" * 600)], query="word " * 400, note="n" * 2_000, table="t" * 200), 500)
    assert len(block) <= 500
    assert "left out" in block


def test_control_characters_a_table_holds_are_escaped_and_line_breaks_kept():
    odd = hit(0, "Line one\x1b[2J\nline\ttwo\x00 \u2066x", source="doc\n.md", id="doc.md#0\x07", heading="H\x9b")
    block = render(reply([odd]), 12_000)
    assert "Line one\\x1b[2J\nline\ttwo\\x00 \\u2066x" in block
    assert "Source: doc\\n.md\n" in block and "Id: doc.md#0\\x07\n" in block and "Section: H\\x9b\n" in block
    cut = render(reply([{**odd, "text": "\x00" * 2_000}]), 600)
    assert len(cut) <= 600 and "\\x00" in cut and "\x00" not in cut


def test_the_header_lists_the_filters_asked_for_by_their_argument_names_and_none_without_any():
    filters = Filters.of(tags=["Setup", "linux"], tag_match="all", since="2024", until="2024-06", types=["md", "pdf"])
    block = render(reply([hit(0, "First text.")]), 12_000, filters, "guide/")
    assert (
        "- query: chain\n"
        '- filters: tags ["setup", "linux"] (tagMatch all) · since 2024-01-01 · until 2024-06-30 · types ["md", "pdf"]'
        ' · path "guide/"\n'
    ) in block
    assert '- filters: tags ["setup"] (tagMatch any)\n' in render(reply([]), 12_000, Filters.of(tags=["setup"]))
    assert '- filters: path "a"\n' in render(reply([]), 12_000, Filters(), "a")
    for bare in (render(reply([hit(0, "x")]), 12_000), render(reply([hit(0, "x")]), 12_000, Filters(), "")):
        assert "filters" not in bare


def test_filter_values_are_quoted_escaped_and_shortened():
    path = 'a", "b\x1b[2J\u202e' + "p" * 500
    block = render(reply([]), 12_000, Filters.of(tags=['a", "b', "t" * 200] * 3), path)
    line = next(line for line in block.splitlines() if line.startswith("- filters: "))
    assert line.startswith('- filters: tags ["a\\", \\"b", "tttt')
    assert 'path "a\\", \\"b\\u001b[2J\\u202eppp' in line and "\x1b" not in line and "\u202e" not in line
    assert len(line) < 200 and line.count("…") == 2


def test_the_smallest_budget_holds_with_the_longest_query_note_and_filters():
    filters = Filters.of(
        tags=[f"tag {n} " + "t" * 150 for n in range(MAX_TAGS)],
        since="2024",
        until="2025",
        types=["docx", "html", "md", "pdf", "rst", "txt"],
    )
    for hits in ([hit(0, "x" * 600)], []):
        block = render(reply(hits, query="word " * 400, note="n" * 2_000, table="t" * 200), 500, filters, "p" * 4000)
        assert len(block) <= 500
        assert "- filters: tags [" in block and "…\n- note: " in block
