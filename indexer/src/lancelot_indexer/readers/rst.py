"""reStructuredText to blocks, line by line: titles from their underlines, directives' bodies kept as text.

A small reader of its own rather than docutils: docutils knows none of Sphinx's directives and roles
(`.. function::`, `:func:`), reporting each as an error in place of its text, and it is several times
slower (docs/decisions.md). What this reader knows:

* A section title is a line underlined (and maybe overlined) with one punctuation character repeated at
  least as long as the title; levels go by the order in which the styles first appear, as in docutils.
* A directive keeps its arguments (a Sphinx signature, an admonition's title) and its body as text; code
  directives keep theirs whole (`code-block`, `doctest`...); a few that hold no prose are dropped with
  their body (`toctree`, `image`, `index`, `raw`, `include`...), as are comments and link targets.
* A paragraph ending in `::` is followed by a literal block, kept whole; tables lose their borders.
* Inline markup goes: roles (`:func:`open``, a `title <target>` shows its title), emphasis, literals,
  references (`name_`, `` `text <url>`_ ``), footnote references, substitutions, escapes.
"""

from __future__ import annotations

import itertools
import re

from lancelot_indexer.chunking.chunk import Block, Document

# Punctuation docutils allows in section adornments.
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1+")
_DIRECTIVE = re.compile(r"\.\.[ \t]+([\w][\w:.+-]*)::(?:[ \t]+(.*))?$")
_FOOTNOTE = re.compile(r"\.\.[ \t]+\[[^\]]+\](?:[ \t]+(.*))?$")
_GRID_BORDER = re.compile(r"\+[-=+]+\+")
_SIMPLE_BORDER = re.compile(r"=+(?:[ \t]+=+)+")
_OPTION = re.compile(r":[^:\s][^:]*:(?:[ \t]|$)")
# Directives whose body is code (kept whole) or holds no prose (dropped with it).
CODE = frozenset({"code", "code-block", "sourcecode", "doctest", "testcode", "testoutput", "parsed-literal", "math"})
DROPPED = frozenset(
    {
        "toctree", "image", "index", "raw", "include", "literalinclude", "highlight", "contents", "sectnum",
        "meta", "tabularcolumns", "role", "default-role", "csv-table", "figure", "currentmodule", "program",
        "moduleauthor", "sectionauthor", "codeauthor", "graphviz", "audit-event", "seealso-latex",
    }
)  # fmt: skip

VERSIONS = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "deprecated-removed": "Deprecated since version",
}

_LITERAL = re.compile(r"(``.+?``)")
_INLINE = [
    # :role:`text` and `text`:role: (a `title <target>` shows its title; Sphinx's ~ and ! prefixes go)
    (re.compile(r"(?::[\w.+-]+)+:`((?:[^`\\]|\\.)*)`|`((?:[^`\\]|\\.)*)`(?::[\w.+-]+)+:"), None),
    # `text <url>`_ , `text`_ , `interpreted text`
    (re.compile(r"`((?:[^`\\]|\\.)*)`_{0,2}"), None),
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"), r"\1"),
    (re.compile(r"(?<![\w*\\])\*(?=[^\s*])(.+?)(?<=[^\s\\])\*(?![\w*])"), r"\1"),
    (re.compile(r"[ \t]*\[(?:\d+|#[\w-]*|\*|[\w.-]+)\]_"), ""),
    (re.compile(r"(?<![\w`\\])([A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?)__?(?!\w)"), r"\1"),
    (re.compile(r"(?<![\w|])\|(?=\S)([^|]+?)(?<=\S)\|(?:__?)?(?![\w|])"), r"\1"),
    (re.compile(r"\\(.)"), r"\1"),
]
_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.DOTALL)


def _shown(match: re.Match[str]) -> str:
    """What an interpreted text or a reference shows: its title, else its target, without Sphinx's prefixes."""
    text = next((group for group in match.groups() if group is not None), "")
    target = _TARGET.match(text)
    if target:
        text = target.group(1) or target.group(2)
    return text.lstrip("~!")


def plain(text: str) -> str:
    """`text` without its inline markup; literals (``code``) keep theirs."""
    parts = _LITERAL.split(text)
    for index, part in enumerate(parts):
        if index % 2:
            parts[index] = part[2:-2]
            continue
        for pattern, replacement in _INLINE:
            part = pattern.sub(replacement if replacement is not None else _shown, part)
        parts[index] = part
    return "".join(parts)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _adornment(line: str) -> bool:
    return bool(_ADORNMENT.fullmatch(line.rstrip())) and len(line.rstrip()) >= 2


def _dedent(lines: list[str]) -> str:
    margin = min((_indent(line) for line in lines if line.strip()), default=0)
    return "\n".join(line[margin:].rstrip() for line in lines).strip("\n")


class _Reader:
    def __init__(self, text: str) -> None:
        self.lines = text.expandtabs(8).split("\n")
        self.blocks: list[Block] = []
        self.styles: list[tuple[str, bool]] = []  # adornment styles, in the order they first appear
        self.paragraph: list[str] = []
        self.first = self.last = 0  # the open paragraph's first and last line, as indexes (a table's borders between)
        self.literal_next = False  # the paragraph just closed ended in `::`
        self.columns: list[int] = []  # where the last grid table border had its `+`

    def end_of(self, start: int, indent: int) -> int:
        """The index of the first line after `start` that is not blank and indented `indent` or less."""
        at = start + 1
        while at < len(self.lines) and (not self.lines[at].strip() or _indent(self.lines[at]) > indent):
            at += 1
        return at

    def close(self) -> None:
        if not self.paragraph:
            return
        text = "\n".join(self.paragraph)
        self.literal_next = text.endswith("::")
        if self.literal_next:
            text = text[:-2].rstrip() if text[:-2].endswith((" ", "\n")) or text == "::" else text[:-1]
        text = plain(text).strip()
        if text:
            self.blocks.append(Block(text, lines=(self.first + 1, self.last + 1)))
        self.paragraph = []

    def whole(self, start: int, end: int) -> None:
        """Lines start..end-1 as one block kept whole (code)."""
        while end > start and not self.lines[end - 1].strip():
            end -= 1
        code = _dedent(self.lines[start:end])
        if code.strip():
            first = start + next(n for n, line in enumerate(self.lines[start:end]) if line.strip())
            self.blocks.append(Block(code, whole=True, lines=(first + 1, first + code.count("\n") + 1)))

    def title(self, at: int, text: str, style: tuple[str, bool], span: int) -> None:
        if style not in self.styles:
            self.styles.append(style)
        level = min(self.styles.index(style) + 1, 6)
        self.blocks.append(Block(plain(text.strip()), level=level, lines=(at + 1, at + span)))

    def read(self) -> list[Block]:
        lines, at = self.lines, 0
        while at < len(lines):
            at = self.step(at)
        self.close()
        return self.blocks

    def step(self, at: int) -> int:
        """Read what starts at line `at`; the index of the line after it."""
        lines = self.lines
        line = lines[at]
        stripped = line.strip()
        if not stripped:
            self.close()
            return at + 1
        indent = _indent(line)
        if self.literal_next and not self.paragraph:
            self.literal_next = False
            previous = next((_indent(lines[back]) for back in range(at - 1, -1, -1) if lines[back].strip()), 0)
            if indent > previous:
                end = self.end_of(at, previous)
                self.whole(at, end)
                return end
        after = lines[at + 1] if at + 1 < len(lines) else ""
        if not self.paragraph and indent == 0:
            # Overlined title: adornment, text, the same adornment.
            if _adornment(line) and at + 2 < len(lines) and lines[at + 2].rstrip() == line.rstrip() and after.strip():
                self.title(at, after, (line[0], True), 3)
                return at + 3
            if not _adornment(line) and _adornment(after) and len(after.rstrip()) >= len(line.rstrip()) >= 1:
                self.title(at, line, (after[0], False), 2)
                return at + 2
        if stripped.startswith(".. ") or stripped == "..":
            self.close()
            return self.explicit(at, indent, stripped)
        if _adornment(stripped) and len(stripped) >= 4 and not self.paragraph:
            return at + 1  # a transition, or a table's border
        if _GRID_BORDER.fullmatch(stripped):
            self.columns = [column for column, char in enumerate(line) if char == "+"]
            return at + 1
        if _SIMPLE_BORDER.fullmatch(stripped):
            return at + 1
        if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1 and self.columns:
            stripped = self.cells(line)
        elif stripped.startswith("| "):
            stripped = stripped[2:]  # a line block's line
        elif stripped.startswith(">>> ") and not self.paragraph:
            end = at + 1
            while end < len(lines) and lines[end].strip():
                end += 1
            self.whole(at, end)
            return end
        if not self.paragraph:
            self.first = at
        self.paragraph.append(stripped)
        self.last = at
        return at + 1

    def cells(self, line: str) -> str:
        """A grid table's row as its cells' text (a cell may hold a line block: its `|` goes too)."""
        bounds = self.columns
        cells = (line[start + 1 : end].strip() for start, end in itertools.pairwise(bounds))
        return "  ".join(cell.removeprefix("| ").removeprefix("|").strip() for cell in cells if cell.strip("| "))

    def explicit(self, at: int, indent: int, stripped: str) -> int:
        """A directive, footnote, comment or target starting at `at`; the index of the line after it."""
        end = self.end_of(at, indent)
        directive = _DIRECTIVE.match(stripped)
        if directive is None:
            footnote = _FOOTNOTE.match(stripped)
            if footnote is None:  # a comment, a link target or a substitution's definition
                return end
            if footnote.group(1):
                self.paragraph, self.first, self.last = [footnote.group(1)], at, at
            return at + 1
        name = directive.group(1).lower().split(":")[-1]
        if name in DROPPED:
            return end
        body = at + 1
        arguments = [directive.group(2) or ""]
        while body < end and self.lines[body].strip():  # arguments go on, then options
            if not _OPTION.match(self.lines[body].strip()) and len(arguments) == body - at:
                arguments.append(self.lines[body].strip())
            body += 1
        if name in CODE:
            self.whole(body, end)
            return end
        signature = " ".join(" ".join(arguments).split())
        if name in VERSIONS:  # as Sphinx shows them: "Changed in version 3.9: ..."
            version, _, rest = signature.partition(" ")
            signature = f"{VERSIONS[name]} {version}" + (f": {rest}" if rest else ".")
        if signature:
            self.blocks.append(Block(plain(signature), lines=(at + 1, at + len(arguments))))
        return body


def extract(text: str, file_name: str) -> Document:
    """The title (the first section title, else the file name) and the blocks of a reStructuredText file."""
    blocks = _Reader(text.replace("\r\n", "\n").replace("\r", "\n")).read()
    title = next((block.text for block in blocks if block.level and block.text), None)
    return Document(title or file_name, blocks)
