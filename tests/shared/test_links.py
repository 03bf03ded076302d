from __future__ import annotations

import pytest

from lancelot_schema.links import link, template_problem


def test_a_sphinx_template_links_a_passage_to_its_anchor_and_a_document_to_its_page():
    template = "https://docs.example.com/{path}#{anchor}"
    assert (
        link(template, "library/os.html", anchor="os.path.join")
        == "https://docs.example.com/library/os.html#os.path.join"
    )
    assert link(template, "library/os.html") == "https://docs.example.com/library/os.html"


def test_a_github_template_links_line_ranges_and_drops_the_fragment_without_lines():
    template = "https://github.com/o/r/blob/main/docs/{path}#L{line}-L{line_end}"
    assert link(template, "guide/a.md", line=3, line_end=9) == "https://github.com/o/r/blob/main/docs/guide/a.md#L3-L9"
    assert link(template, "page.html", anchor="x") == "https://github.com/o/r/blob/main/docs/page.html"


def test_a_pdf_template_links_a_passage_to_its_page_and_drops_the_fragment_without_one():
    template = "https://x/docs/{path}#page={page}"
    assert link(template, "manuals/tool.pdf", page=3) == "https://x/docs/manuals/tool.pdf#page=3"
    assert link(template, "guide/a.md", line=3, line_end=9) == "https://x/docs/guide/a.md"
    assert link(template, "manuals/tool.pdf") == "https://x/docs/manuals/tool.pdf"


def test_stem_drops_the_last_extension_only_and_path_segments_are_percent_encoded():
    assert link("https://x/{stem}/", "guide/v1.2 notes.md") == "https://x/guide/v1.2%20notes/"
    assert link("https://x/{path}", "a#b/c?d%.md") == "https://x/a%23b/c%3Fd%25.md"
    assert link("https://x/{path}#{anchor}", "a.html", anchor="sec 1") == "https://x/a.html#sec%201"


def test_a_fragment_made_of_the_path_alone_is_kept_for_hash_routed_sites():
    assert link("https://x/#/{stem}", "guide/a.md") == "https://x/#/guide/a"


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("https://x/{title}", "the placeholders are {path}, {stem}, {anchor}, {line}, {line_end}, {page}."),
        ("https://x/{page}.pdf", "has {page} before '#'"),
        ("https://x/{anchor}/#", "has {anchor} before '#'"),
        ("https://x/{path", "is not a template"),
        ("https://x/{path!r}", "with a conversion or format"),
        ("https://x/{0}", "has {0}"),
        ("", "is empty"),
        ("https://x/{path} y", "holds whitespace"),
    ],
)
def test_templates_that_cannot_work_are_refused_with_the_reason(template, problem):
    assert problem in (template_problem(template) or "")


def test_good_templates_pass():
    for template in ("https://x/{path}#{anchor}", "file:///srv/docs/{path}#L{line}", "https://x/{{literal}}/{stem}"):
        assert template_problem(template) is None
