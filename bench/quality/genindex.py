"""A labelled set from Sphinx's general index: Python's `genindex-*.html` (Debian's python3.11-doc).

The index was made by the manual's authors: each entry names a term and links the pages (and anchors)
that the term is about. Every entry line becomes a query, typed as a person would type it, and its
linked pages (path under the HTML folder, anchor dropped) become the relevant pages. Deterministic: the
same HTML gives the same set, a fixed-seed sample stratified by index letter.

Rules (`docs/benchmarks.md` says why):
- a line reads `term (qualifier)` or sits under a term as a sub-entry; the query is the term, then the
  qualifier or sub-entry in plain words: `abspath() (in module os.path)` -> `abspath module os.path`,
  `abs()` > `built-in function` -> `abs built-in function`, `environment variable` > `PYTHONHOME` ->
  `environment variable PYTHONHOME`. `()`, parentheses, commas and `#` go, and so does the filler word
  `in`; a sub-entry that restates the term or its initials stands alone (`RFC` > `RFC 2822` ->
  `RFC 2822`, `Python Enhancement Proposals` > `PEP 343` -> `PEP 343`);
- a term's own line without a qualifier (`abort()`) is a query for the bare term (`abort`), and every
  page linked under that term is relevant to it;
- left out: a term or sub-entry with fewer than 2 letters or digits (`A (in module re)`, `-c`, `!=`), a
  query that a page's own file name gives away (term or sub-entry equal to a linked page's stem, as in
  `module` > `abc` -> `library/abc.html`), a query with more than MAX_PAGES relevant pages, and one
  none of whose pages is indexed (Debian ships `whatsnew/changelog.html` gzipped);
- queries with the same words in any order (`statement assignment`, `assignment statement`) are one,
  relevant to the pages of both;
- each query has a kind: `topic` when all its links are `index-N` or glossary targets (what the authors
  indexed by hand, or a role such as :pep: did for them), else `api` (an object's own description).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

MAX_PAGES = 10
QUALIFIED = re.compile(r"^(?P<term>.*\S)\s+\((?P<qualifier>[^()]*)\)$")
ANCHOR_TOPIC = re.compile(r"^(index-\d+|term-.+)$")


@dataclass
class Line:
    """One `<li>` of the index: its text (first link's text, or the bare term) and its links' targets."""

    text: str = ""
    links: list[str] = field(default_factory=list)
    subs: list[Line] = field(default_factory=list)


@dataclass
class Judged:
    """A query, its relevant pages, its index letter, its kind (`topic`, `api`) and the index line it reads."""

    query: str
    relevant: list[str]
    letter: str
    kind: str
    entry: str


class _IndexParser(HTMLParser):
    """The `table.indextable` of one genindex page as a list of top-level lines with their sub-lines."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[Line] = []
        self._in_table = False
        self._open: list[Line] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "table" and "indextable" in (values.get("class") or ""):
            self._in_table = True
        elif self._in_table and tag == "li":
            line = Line()
            (self._open[-1].subs if self._open else self.lines).append(line)
            self._open.append(line)
        elif self._in_table and tag == "a" and self._open:
            self._href = values.get("href") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_table = False
        elif self._in_table and tag == "li" and self._open:
            self._open.pop()
        elif tag == "a" and self._href is not None and self._open:
            self._open[-1].links.append(self._href)
            self._href = None

    def handle_data(self, data: str) -> None:
        # A line's text is its bare term or its first link's text; `, [1]`, `[2]`... add pages, not words.
        if self._open and not self._open[-1].links:
            self._open[-1].text += data


def parse(page: Path) -> list[Line]:
    parser = _IndexParser()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.lines


def _plain(text: str) -> str:
    """Index wording as typed: no `()`, parentheses, commas or `#`, no filler `in`, single spaces."""
    words = re.sub(r"\(\)|[(),#]", " ", text).split()
    return " ".join(word for word in words if word != "in")


def _query(term: str, extra: str) -> str:
    """Term then qualifier or sub-entry; a sub-entry that restates the term (`RFC` > `RFC 2822`) or its
    initials (`Python Enhancement Proposals` > `PEP 8`) stands alone, as a person would type it."""
    term, extra = _plain(term), _plain(extra)
    initials = "".join(word[0] for word in term.split()).lower()
    first = extra.split()[0].lower() if extra else ""
    if first and (first == term.lower() or (len(initials) > 1 and first == initials)):
        return extra
    return f"{term} {extra}".strip()


def _split(text: str) -> tuple[str, str]:
    text = " ".join(text.split()).rstrip(",")
    match = QUALIFIED.match(text)
    return (match["term"], match["qualifier"]) if match else (text, "")


def _key(text: str) -> str:
    return " ".join(sorted(re.findall(r"\w+", text.lower())))


def _wordy(text: str) -> bool:
    return len(re.sub(r"[\W_]", "", text)) >= 2


def _pages(links: list[str], keep: set[str]) -> list[str]:
    pages = [link.split("#", 1)[0] for link in links]
    return list(dict.fromkeys(page for page in pages if page in keep))


def _kind(links: list[str]) -> str:
    """`topic` when every link is to an `index-N` target (an `.. index::` entry, or one a role such as
    :pep: made) or a glossary term; `api` for an object's own description (`os.path.abspath`, `module-abc`,
    `c.PyList_New`, `envvar-PYTHONPATH`), which Sphinx indexes by itself."""
    anchors = [link.partition("#")[2] for link in links]
    return "topic" if all(ANCHOR_TOPIC.match(anchor) for anchor in anchors) else "api"


def _candidates(line: Line) -> Iterator[tuple[str, str, list[str], str]]:
    """(term, qualifier or sub-entry, links, as printed) of every query-worthy part of a top-level line."""
    term, qualifier = _split(line.text)
    if line.links:
        # A bare term (`abort()`) is about everything listed under it; a qualified one about its own links.
        under = line.links + [link for sub in line.subs for link in sub.links]
        yield term, qualifier, (line.links if qualifier else under), line.text.strip()
    for sub in line.subs:
        extra = " ".join(sub.text.split()).rstrip(",")
        yield term, extra, sub.links, f"{line.text.strip()} > {extra}"


def _unusable(term: str, extra: str, pages: list[str]) -> str | None:
    """Why a candidate cannot be a query, or None."""
    if not _wordy(term) or (extra and not _wordy(extra)):
        return "term or sub-entry not a word"
    if {_plain(term).lower(), _plain(extra).lower()} & {Path(page).stem.lower() for page in pages}:
        return "a linked page's file name"
    if not pages:
        return "no indexed page"
    if len(pages) > MAX_PAGES:
        return f"more than {MAX_PAGES} pages"
    return None


def entries(root: Path, keep: set[str]) -> tuple[list[Judged], Counter[str]]:
    """Every usable query, in index order, with its relevant pages among `keep`; and what became of each
    index line (kept, or why not)."""
    fates: Counter[str] = Counter()
    by_key: dict[str, Judged] = {}
    for page in sorted(root.glob("genindex-*.html")):
        letter = page.stem.removeprefix("genindex-")
        if letter == "all":
            continue
        for line in parse(page):
            for term, extra, links, printed in _candidates(line):
                pages = _pages(links, keep)
                query = _query(term, extra)
                reason = _unusable(term, extra, pages)
                if reason is None and _key(query) in by_key:
                    known = by_key[_key(query)]
                    known.relevant = list(dict.fromkeys([*known.relevant, *pages]))
                    reason = "same words as another (pages merged)"
                elif reason is None:
                    by_key[_key(query)] = Judged(query, pages, letter, _kind(links), printed)
                fates[reason or "kept"] += 1
    return list(by_key.values()), fates


def sample(items: list[Judged], size: int, seed: int) -> list[Judged]:
    """`size` of `items`, each index letter's share in proportion to its count (largest remainders),
    drawn with a fixed seed."""
    letters: dict[str, list[Judged]] = {}
    for item in items:
        letters.setdefault(item.letter, []).append(item)
    quotas = {letter: size * len(group) / len(items) for letter, group in sorted(letters.items())}
    counts = {letter: int(quota) for letter, quota in quotas.items()}
    by_remainder = sorted(quotas, key=lambda letter: (counts[letter] - quotas[letter], letter))
    for letter in by_remainder[: size - sum(counts.values())]:
        counts[letter] += 1
    rng = random.Random(seed)
    return [item for letter, count in counts.items() for item in rng.sample(letters[letter], count)]
