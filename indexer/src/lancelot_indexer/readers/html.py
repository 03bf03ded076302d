"""HTML to blocks with selectolax (Lexbor, an HTML5 parser): text only, block elements as breaks.

Lexbor does the parsing and entity decoding in C; Python walks the elements once, inserting markers
next to block elements, then turns the marked text into paragraphs. Each block records its anchor: the
`id` (or `<a name>`) of the nearest element that starts at or before its text, where `page.html#anchor`
lands; an element that starts inside a block's text is the anchor of the blocks after it.

Deep nesting is slow inside Lexbor, not here: for each block element it opens, an HTML5 tree builder
looks down the stack of open elements for a `p` to close, so d nested `div`s cost d² (nested `span`s stay
linear, and so does the walk below; docs/decisions.md, "HTML parser"). Lexbor has no depth limit, and a
pre-scan of the markup in Python costs about as much as the parse, so the bound is the per-file time limit
of `workers.py`, which stops such a page and skips it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from selectolax.lexbor import LexborHTMLParser, LexborNode

from lancelot_indexer.chunking.chunk import Block, Document
from lancelot_indexer.chunking.metadata import Metadata

REMOVED = ["script", "style", "noscript", "template", "svg"]
# Site chrome, not the document: navigation (HTML's own, Sphinx's sidebars, DocBook's Prev/Up/Next bars,
# whose neighbours' titles made false hits) and the "¶" permalinks Sphinx and MkDocs put in headings.
NOT_CONTENT = "nav, [role=navigation], .navheader, .navfooter, a.headerlink"
# DocBook titles its Note/Tip/Warning boxes with an h3: not a section, or every passage after the box
# would sit under "> Note" until the next real heading. The title stays as a paragraph of the box.
BOXES = ".note, .tip, .warning, .caution, .important"
HEADINGS = "h1, h2, h3, h4, h5, h6"
# fmt: off
PARAGRAPH_ELEMENTS = [
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "li", "main", "nav", "ol",
    "p", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
]
# fmt: on
ANCHORS = "[id], a[name]"
# Sphinx's tables of contents (a `toctree` directive), and where a Sphinx theme puts the page's own content. A
# page whose text, headings aside, is nearly all tables of contents (Python's `contents.html`, a chapter's
# page listing its sections) is a generated page: it holds every title of the pages it lists.
TOCTREE = "div.toctree-wrapper"
MAIN = "[role=main]"
CONTENTS_SHARE = 0.9
# What such a page is: its generator, and the kind of page (documents/generated.py names it so).
CONTENTS_PAGE = ("Sphinx", "table of contents")
# The `<meta>` names (and Open Graph, Dublin Core and schema.org properties) kept as the page's metadata, by the
# field each gives (`metadata.py`): the first one found gives a field, except keywords, which all add up.
META_FIELDS: dict[str, str] = {
    **dict.fromkeys(("description", "og:description", "dc.description", "dcterms.description"), "description"),
    **dict.fromkeys(("keywords", "article:tag", "dc.subject", "dcterms.subject"), "keywords"),
    **dict.fromkeys(("author", "article:author", "dc.creator", "dcterms.creator"), "author"),
    **dict.fromkeys(("date", "dc.date", "dcterms.date"), "date"),
    **dict.fromkeys(("article:published_time", "datepublished", "dcterms.issued"), "published"),
    **dict.fromkeys(("citation_publication_date", "citation_date"), "published"),
    **dict.fromkeys(("dcterms.created", "datecreated"), "created"),
    **dict.fromkeys(("article:modified_time", "datemodified", "dcterms.modified", "last-modified"), "modified"),
}
LINE_ELEMENTS = ["br"]
CELL_ELEMENTS = ["td", "th"]

# Private-use characters mark the breaks until the whitespace has been collapsed.
_PARAGRAPH = "\ue000"
_LINE = "\ue001"
_PRE = "\ue002"
_PRE_NEWLINE = "\ue003"
_PRE_SPACE = "\ue004"
_PRE_TAB = "\ue005"
_HEADING = {level: chr(0xE010 + level) for level in range(1, 7)}
_HEADING_LEVEL = {marker: level for level, marker in _HEADING.items()}
_ANCHOR = "\ue006"  # _ANCHOR + id + _ANCHOR_END where an element with an id starts
_ANCHOR_END = "\ue007"
# Markers that are not words: an anchor before them is still before the block's text.
_NOT_WORDS = "".join([_PRE, _PRE_NEWLINE, _PRE_SPACE, _PRE_TAB, _LINE, *_HEADING.values()])


def _protect(code: str) -> str:
    """`pre` text with its whitespace turned into markers, so that collapsing whitespace leaves it alone."""
    # Chained str.replace runs in C at memchr speed; str.translate with a table goes char by char.
    return code.replace("\r", "").replace("\n", _PRE_NEWLINE).replace(" ", _PRE_SPACE).replace("\t", _PRE_TAB)


def _restore(code: str) -> str:
    return code.replace(_PRE_NEWLINE, "\n").replace(_PRE_SPACE, " ").replace(_PRE_TAB, "\t")


def _collapse(text: str) -> str:
    return " ".join(text.split())


# What goes before and after each element that breaks the text (others are inline).
_MARKS: dict[str, tuple[str, str]] = {
    **{tag: (_PARAGRAPH, _PARAGRAPH) for tag in PARAGRAPH_ELEMENTS},
    **{f"h{level}": (_PARAGRAPH + marker, _PARAGRAPH) for level, marker in _HEADING.items()},
    **{tag: ("", _LINE) for tag in LINE_ELEMENTS},
    **{tag: ("", " ") for tag in CELL_ELEMENTS},
}


# By Lexbor's number for the tag, which a node gives faster than its name; as the UTF-8 that Lexbor stores,
# which selectolax would otherwise encode again for each of the walk's insertions (docs/decisions.md).
_NODES = LexborHTMLParser("")
_MARKS_BY_TAG_ID = {
    _NODES.create_node(tag).tag_id: (before.encode("utf-8"), after.encode("utf-8"))
    for tag, (before, after) in _MARKS.items()
}
_BODY = _NODES.create_node("body").tag_id
_A = _NODES.create_node("a").tag_id


_Value = TypeVar("_Value", str, bytes)


def _taking(method: Any, kind: type[_Value]) -> Callable[[LexborNode, _Value], None]:
    """`method` for a `kind` of argument (str or bytes), called as `_taking(LexborNode.insert_after, str)(node, text)`.

    Selectolax's insert and replace methods are Cython fused functions: called as methods, each call picks its
    specialisation by the argument's type in Python, which costs more than the insertion itself
    (docs/decisions.md, "HTML parser").
    """
    specialised: Callable[[LexborNode, _Value], None] = getattr(method, "__signatures__", {}).get(kind.__name__, method)
    return specialised


_insert_before = _taking(LexborNode.insert_before, str)
_replace_with = _taking(LexborNode.replace_with, str)
_insert_mark_before = _taking(LexborNode.insert_before, bytes)
_insert_mark_after = _taking(LexborNode.insert_after, bytes)


def _first_text(tree: LexborHTMLParser, tag: str) -> str:
    nodes = tree.tags(tag)
    return _collapse(nodes[0].text(deep=True)) if nodes else ""


def extract(html: str, file_name: str) -> Document:
    """The title and the text blocks of an HTML page; never raises on malformed markup."""
    tree = LexborHTMLParser(html)
    metadata = Metadata.of(_meta(tree))
    tree.strip_tags(REMOVED)
    for node in tree.css(NOT_CONTENT):
        node.decompose()
    for box in tree.css(BOXES):
        for heading in box.css(HEADINGS):
            heading.unwrap()
    title = _first_text(tree, "title") or _first_text(tree, "h1") or file_name
    body = tree.body or tree.root
    if body is None:
        return Document(title, [], metadata)
    generated = CONTENTS_PAGE if _contents_only(tree, body) else None
    # Before the `pre` elements become text: an id inside one is then a marker in the middle of its text.
    for node in body.css(ANCHORS):
        tag = node.tag_id
        anchor = node.id or (node.attrs.get("name") if tag == _A else None)
        if anchor and tag != _BODY:  # the body's id lands where the page does
            _insert_before(node, _ANCHOR + anchor + _ANCHOR_END)
    for pre in tree.tags("pre"):
        _replace_with(pre, _PARAGRAPH + _PRE + _protect(pre.text(deep=True)) + _PARAGRAPH)
    # One walk over the elements; a marker inserted next to an element is a text node the walk skips.
    marks, insert_before, insert_after = _MARKS_BY_TAG_ID, _insert_mark_before, _insert_mark_after
    for node in body.traverse():
        mark = marks.get(node.tag_id)
        if mark is not None:
            before, after = mark
            if before:
                insert_before(node, before)
            insert_after(node, after)
    return Document(title, _blocks(body.text(deep=True)), metadata, generated=generated)


def _letters(node: LexborNode) -> int:
    return len("".join(node.text(deep=True).split()))


def _contents_only(tree: LexborHTMLParser, body: LexborNode) -> bool:
    """Whether the page's own text, headings aside, is (nearly) all Sphinx tables of contents."""
    main = tree.css_first(MAIN) or body
    tables = main.css(TOCTREE)
    if not tables:
        return False
    listed = sum(_letters(node) for node in tables)
    own = _letters(main) - sum(_letters(node) for node in main.css(HEADINGS))
    return listed >= CONTENTS_SHARE * own


def _meta(tree: LexborHTMLParser) -> dict[str, Any]:
    """The page's `<meta name|property|itemprop=... content=...>` that META_FIELDS names, by field."""
    found: dict[str, Any] = {}
    for node in tree.tags("meta"):
        attributes = node.attributes
        name = attributes.get("name") or attributes.get("property") or attributes.get("itemprop") or ""
        field = META_FIELDS.get(name.strip().casefold())
        content = " ".join((attributes.get("content") or "").split())
        if field is None or not content:
            continue
        if field == "keywords":  # a list of them, from the commas of each and every keywords element
            found.setdefault(field, []).extend(word.strip() for word in content.split(",") if word.strip())
        else:
            found.setdefault(field, content)
    return found


def _take_anchors(raw: str, anchor: str | None) -> tuple[str, str | None, str | None]:
    """`raw` without its anchor markers, the anchor of its block, and the anchor of the blocks after it."""
    parts = raw.split(_ANCHOR)
    kept = [parts[0]]
    here = anchor
    started = not _blank(parts[0])
    for part in parts[1:]:
        name, end, rest = part.partition(_ANCHOR_END)
        if not (end and name):  # private-use characters of the page itself, not one of our markers
            kept.append(_ANCHOR + part)
            started = started or not _blank(part)
            continue
        anchor = name
        if not started:
            here = name
        kept.append(rest)
        started = started or not _blank(rest)
    return "".join(kept), here, anchor


def _blank(text: str) -> bool:
    return not "".join(text.split()).strip(_NOT_WORDS)


def _blocks(marked: str) -> list[Block]:
    blocks: list[Block] = []
    anchor: str | None = None  # of the next block, unless it has its own
    # Most pieces are empty (the breaks of nested and adjacent elements meet): `filter` drops them in C.
    for raw in filter(None, marked.split(_PARAGRAPH)):
        here = anchor
        if _ANCHOR in raw:
            raw, here, anchor = _take_anchors(raw, anchor)
        # str.split() collapses whitespace far faster than a regular expression; markers are not whitespace.
        words = raw.split()
        if not words:
            continue
        part = " ".join(words)
        first = part[0]
        if first == _PRE:
            code = _restore(part[1:]).strip("\n")
            if code.strip():
                blocks.append(Block(code, whole=True, anchor=here))
            continue
        level = _HEADING_LEVEL.get(first, 0)
        if level:
            part = part[1:].lstrip(" ")
        if _LINE in part:
            part = "\n".join(line for line in (piece.strip(" ") for piece in part.split(_LINE)) if line)
        if part:
            # As Block(part, level=level, anchor=here), without NamedTuple's `__new__`: a third of the time.
            blocks.append(tuple.__new__(Block, (part, level, False, None, here, None)))
    return blocks
