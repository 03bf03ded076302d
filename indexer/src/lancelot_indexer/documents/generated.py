"""Documentation builds under DOCS, and the pages their generator made rather than their authors wrote.

    builds = recognise(folder, prefix, names)    # the Builds rooted at `folder` (`prefix` under DOCS)
    kind_of(builds, relative) -> (Build, Kind)   # what generated the document at `relative`, or None

A build is recognised at its root by the files its generator always leaves there (Sphinx's `objects.inv`,
MkDocs' `search/search_index.json`...), so a folder may hold several builds, each with its rules below
its own root. Left out by those rules: general, module, class and member indexes, search and 404 pages,
and copies of sources (Sphinx's `_sources/` where the page's HTML is there, its `_modules/`, Doxygen's
`*_source.html`, Javadoc's `src-html/`). They repeat the titles and words of every other page, so they
rank for many questions and answer none (docs/decisions.md). A page that is only a table of contents
(Sphinx's `contents.html`) is known by its content, by the HTML reader (`readers/html.py`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Kind:
    """A kind of generated page, as the summary counts it."""

    one: str
    many: str

    def count(self, number: int) -> str:
        return f"{number} {self.one if number == 1 else self.many}"


INDEX = Kind("index page", "index pages")
SEARCH = Kind("search page", "search pages")
CONTENTS = Kind("table of contents", "tables of contents")
SOURCE = Kind("copy of a source", "copies of sources")
NOT_FOUND = Kind("404 page", "404 pages")
HELP = Kind("help page", "help pages")


KINDS = {kind.one: kind for kind in (INDEX, SEARCH, CONTENTS, SOURCE, NOT_FOUND, HELP)}


@dataclass(frozen=True)
class Generated:
    """A document left out as a page that `generator` made (a `kind` of page), not one its authors wrote;
    `digest`: the SHA-256 of its file, when it was read to tell (a table of contents)."""

    relative: str
    generator: str
    kind: Kind
    digest: str = ""


@dataclass(frozen=True)
class Generator:
    """`markers`: files under a build's root (path, and bytes found in its first KB, or None) of which any one
    names a build; `rules`: (glob, kind) for the pages it makes, globs of paths under the root where `*` stays
    within a folder, `**/` is any folders and `/**` anything below; `with_page`: the globs of source copies
    left out only where the page built from them is there."""

    name: str
    markers: tuple[tuple[str, bytes | None], ...]
    rules: tuple[tuple[str, Kind], ...]
    with_page: tuple[str, ...] = ()


SPHINX = Generator(
    "Sphinx",
    markers=(
        ("objects.inv", b"# Sphinx inventory"), ("searchindex.js", b"Search.setIndex("), (".buildinfo", b"Sphinx"),
    ),
    rules=(
        ("genindex.html", INDEX), ("genindex-*.html", INDEX), ("genindex/**", INDEX),  # **: the dirhtml builder's
        ("*-modindex.html", INDEX), ("*-modindex/**", INDEX), ("_modules/index.html", INDEX),
        ("_modules/**", SOURCE),
        ("search.html", SEARCH), ("search/**", SEARCH), ("404.html", NOT_FOUND),
    ),
    with_page=("_sources/**",),
)  # fmt: skip
MKDOCS = Generator(
    "MkDocs",
    markers=(("search/search_index.json", None),),
    rules=(("search.html", SEARCH), ("search/**", SEARCH), ("404.html", NOT_FOUND)),
)
DOXYGEN = Generator(
    "Doxygen",
    markers=(("doxygen.css", b"doxygen"),),
    rules=(
        *((f"{name}.html", INDEX) for name in (
            "files", "annotated", "classes", "hierarchy", "inherits", "namespaces", "modules", "topics", "pages",
            "concepts", "examples",
        )),
        ("functions*.html", INDEX), ("globals*.html", INDEX), ("namespacemembers*.html", INDEX),
        ("*-members.html", INDEX), ("dir_*.html", INDEX), ("*_source.html", SOURCE), ("search/**", SEARCH),
        ("graph_legend.html", HELP),
    ),
)  # fmt: skip
JAVADOC = Generator(
    "Javadoc",
    markers=tuple((page, b"javadoc") for page in ("overview-tree.html", "index-all.html", "allclasses-index.html")),
    rules=(
        ("index-all.html", INDEX), ("index-files/**", INDEX), ("allclasses*.html", INDEX),
        ("allpackages-index.html", INDEX), ("overview-tree.html", INDEX), ("overview-frame.html", INDEX),
        ("deprecated-list.html", INDEX), ("new-list.html", INDEX), ("preview-list.html", INDEX),
        ("**/package-tree.html", INDEX), ("**/package-frame.html", INDEX), ("**/package-use.html", INDEX),
        ("**/class-use/**", INDEX), ("search.html", SEARCH), ("help-doc.html", HELP), ("src-html/**", SOURCE),
    ),
)  # fmt: skip
GENERATORS = (SPHINX, MKDOCS, DOXYGEN, JAVADOC)
# Sphinx copies each source as `_sources/NAME.SUFFIX.txt` (`.txt` alone when the source is text already).
_SOURCE_SUFFIXES = (".rst", ".md", ".txt", ".ipynb")


def _regex(glob: str) -> str:
    parts = re.split(r"(\*\*/|/\*\*|\*|\?)", glob)
    wild = {"**/": "(?:.*/)?", "/**": "/.*", "*": "[^/]*", "?": "[^/]"}
    return "".join(wild.get(part, re.escape(part)) for part in parts)


def _compiled(globs: Sequence[str]) -> re.Pattern[str]:
    """One pattern for all `globs`, whose match's `lastgroup` is `g<index>`."""
    return re.compile("|".join(f"(?P<g{index}>{_regex(glob)})" for index, glob in enumerate(globs)))


class Listing(Protocol):
    """A folder of DOCS that is not one here (a prefix on a bucket: `bucket.py`), as telling a build reads it."""

    def head(self, path: str, size: int) -> bytes | None:
        """The first `size` bytes of the file at `path` below it; None when there is none."""
        ...

    def is_file(self, path: str) -> bool: ...


def head(folder: Path | Listing, path: str, size: int) -> bytes | None:
    """The first `size` bytes of the file at `path` below `folder`; None when it cannot be read."""
    if not isinstance(folder, Path):
        return folder.head(path, size)
    try:
        with (folder / path).open("rb") as handle:
            return handle.read(size)
    except OSError:
        return None


def _is_file(folder: Path | Listing, path: str) -> bool:
    return (folder / path).is_file() if isinstance(folder, Path) else folder.is_file(path)


@dataclass(frozen=True)
class Build:
    """A documentation build: its generator, and its root (`folder`, `prefix` under DOCS: "" or ending in "/")."""

    generator: Generator
    folder: Path | Listing
    prefix: str

    def kind_of(self, relative: str) -> Kind | None:
        """The kind of generated page the document at `relative` (under DOCS) is, or None."""
        if not relative.startswith(self.prefix):
            return None
        inside = relative[len(self.prefix) :]
        match = _PATTERNS[self.generator.name].fullmatch(inside)
        if match is not None and match.lastgroup is not None:
            return self.generator.rules[int(match.lastgroup[1:])][1]
        copies = _COPIES[self.generator.name]
        if copies is not None and copies.fullmatch(inside) and self._page_there(inside):
            return SOURCE
        return None

    def _page_there(self, copy: str) -> bool:
        """Whether the page a source copy (`_sources/guide/install.rst.txt`) was built into is in the build."""
        page = copy.partition("/")[2].removesuffix(".txt")
        for suffix in _SOURCE_SUFFIXES:
            if page.endswith(suffix) and len(page) > len(suffix):
                page = page.removesuffix(suffix)
                break
        return _is_file(self.folder, f"{page}.html") or _is_file(self.folder, f"{page}/index.html")


_PATTERNS = {generator.name: _compiled([glob for glob, _ in generator.rules]) for generator in GENERATORS}
_COPIES = {generator.name: _compiled(generator.with_page) if generator.with_page else None for generator in GENERATORS}


def _marked(folder: Path | Listing, path: str, signature: bytes | None) -> bool:
    first = head(folder, path, 1024)
    return first is not None and (signature is None or signature in first)


def recognise(folder: Path | Listing, prefix: str, names: Collection[str]) -> list[Build]:
    """The builds rooted at `folder` (its path under DOCS is `prefix`), by the names of its entries."""
    return [
        Build(generator, folder, prefix)
        for generator in GENERATORS
        if any(path.split("/", 1)[0] in names and _marked(folder, path, sign) for path, sign in generator.markers)
    ]


def kind_of(builds: Sequence[Build], relative: str) -> tuple[Build, Kind] | None:
    """The innermost build that generated the document at `relative`, and what kind of page it is; or None."""
    for build in reversed(builds):
        kind = build.kind_of(relative)
        if kind is not None:
            return build, kind
    return None
