"""Markdown to blocks: headings and code fences found by markdown-it-py, paragraphs kept as written; YAML front
matter gives the title and the document's metadata (`metadata.py`)."""

from __future__ import annotations

import re
from typing import Any, ClassVar

import yaml  # type: ignore[import-untyped]  # no stubs in the dev environment
from markdown_it import MarkdownIt
from markdown_it.token import Token

from lancelot_indexer.chunking.chunk import Block, Document
from lancelot_indexer.chunking.metadata import Metadata, utf8

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
# Front matter longer than this is not read (the text after it still is): YAML is parsed at a few MB a second,
# and no page's metadata needs so much.
MAX_FRONT_MATTER = 64 * 1024
_INLINE_TEXT = frozenset({"text", "code_inline", "image"})
_parser = MarkdownIt("commonmark")
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML has it


class _Loader(_SafeLoader):  # type: ignore[misc]
    """YAML's safe loader (plain data only), with dates left as the text they are written as: YAML makes
    `date: 2024-13-45` an error, not a string, and the metadata keeps dates as written anyway."""

    yaml_implicit_resolvers: ClassVar = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _SafeLoader.yaml_implicit_resolvers.items()
    }


def front_matter(text: str) -> tuple[dict[Any, Any] | None, str]:
    """The YAML front matter as a map (None when absent, not a map, too long or unusable) and the text after it."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None, text
    source = match.group(1) or ""
    data = None
    if len(source) <= MAX_FRONT_MATTER:
        try:
            data = yaml.load(source, Loader=_Loader)  # noqa: S506  # a safe loader
        except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError):
            # RecursionError: nesting hundreds deep; ValueError: an explicit `!!timestamp` that is no date.
            data = None
    return (data if isinstance(data, dict) else None), text[match.end() :]


def _title(data: dict[Any, Any] | None) -> str | None:
    title = data.get("title") if data is not None else None
    title_text = " ".join(utf8(str(title)).split()) if isinstance(title, str | int | float) else ""
    return title_text or None


def inline_text(token: Token) -> str:
    """The visible text of an inline token: markup removed, code spans and image alt text kept."""
    words: list[str] = []
    for child in token.children or []:
        if child.type in ("softbreak", "hardbreak"):
            words.append(" ")
        elif child.type in _INLINE_TEXT:
            words.append(child.content)
    return " ".join("".join(words).split())


def extract(text: str, file_name: str) -> Document:
    """The title (front matter, else first heading, else file name) and the blocks of a Markdown file."""
    data, body = front_matter(text)
    front_title = _title(data)
    # Line numbers are counted in the file as written: the front matter's lines come first.
    skipped = text.count("\n", 0, len(text) - len(body))
    tokens = _parser.parse(body)
    headings: dict[int, tuple[int, int, str]] = {}
    whole: dict[int, int] = {}
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None:
            continue
        start, end = token.map
        if token.type == "heading_open":
            headings[start] = (end, int(token.tag[1:]), inline_text(tokens[index + 1]))
        elif token.type in ("fence", "code_block"):
            whole[start] = end
    title = front_title or next((text for _, _, text in headings.values() if text), None) or file_name
    return Document(title, _blocks(body.split("\n"), headings, whole, skipped), Metadata.of(data))


def _blocks(
    lines: list[str], headings: dict[int, tuple[int, int, str]], whole: dict[int, int], skipped: int
) -> list[Block]:
    """Blocks with their lines: `lines[n]` is line `skipped + n + 1` of the file."""
    blocks: list[Block] = []
    paragraph: list[str] = []
    first = 0  # where the open paragraph starts in `lines`

    def close_paragraph() -> None:
        joined = "\n".join(paragraph).strip()
        if joined:
            start = skipped + first + 1
            blocks.append(Block(joined, lines=(start, start + len(paragraph) - 1)))
        paragraph.clear()

    line_number = 0
    while line_number < len(lines):
        if line_number in headings:
            close_paragraph()
            end, level, heading = headings[line_number]
            span = (skipped + line_number + 1, skipped + end)
            blocks.append(Block(heading or lines[line_number].strip("# \t"), level=level, lines=span))
            line_number = end
        elif line_number in whole:
            close_paragraph()
            end = whole[line_number]
            code = "\n".join(lines[line_number:end]).rstrip()
            if code.strip():
                start = skipped + line_number + 1
                blocks.append(Block(code, whole=True, lines=(start, start + code.count("\n"))))
            line_number = end
        else:
            line = lines[line_number]
            if line.strip():
                if not paragraph:
                    first = line_number
                paragraph.append(line.rstrip())
            else:
                close_paragraph()
            line_number += 1
    close_paragraph()
    return blocks
