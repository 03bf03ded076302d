"""The description a table gets when `lancelot-index` is given none: what the documents say they are.

    built(docs)              # a Sphinx build's project and version, a MkDocs build's site name; or None
    Titles().add(title)      # the documents' titles, counted by suffix ("… — Python 3.11 documentation")
    titles.common()          # the suffix most of them share, or None
    folder_name(docs)        # the last resort: DOCS's own name

Builds are recognised as `generated.py` recognises them, at DOCS and one folder down (`_build/html`).
Whatever is found is text from the documents: it is `about.cleaned` (one bounded line) before it is stamped.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from lancelot_indexer.documents import generated
from lancelot_indexer.documents.generated import MKDOCS, SPHINX, Build, recognise
from lancelot_schema import about
from lancelot_schema.storage import Location

# Sphinx's inventory starts with four lines of text, then its zlib body: `# Project: NAME` and `# Version: V`.
_INVENTORY_HEAD = 1024
_PROJECT = re.compile(rb"^# Project: (.*)$", re.MULTILINE)
_VERSION = re.compile(rb"^# Version: (.*)$", re.MULTILINE)
# MkDocs titles its 404 page with the site name alone (every theme: `{{ config.site_name }}` without a page).
_TITLE = re.compile(rb"<title>([^<]*)</title>", re.IGNORECASE)
_PAGE_HEAD = 16 * 1024
# What separates a page's own title from its site's: "Page — Site", "Page - Site", "Page | Site".
_SUFFIX = re.compile(r"\s+[—–|·-]\s+(?=\S)")


def _builds(docs: Path) -> list[Build]:
    """The builds rooted at DOCS, else those one folder down (in name order)."""
    found = _recognised(docs, "")
    if found:
        return found
    try:
        folders = sorted(entry.name for entry in os.scandir(docs) if entry.is_dir() and not entry.name.startswith("."))
    except OSError:
        return []
    return [build for name in folders for build in _recognised(docs / name, f"{name}/")]


def _recognised(folder: Path, prefix: str) -> list[Build]:
    try:
        names = {entry.name for entry in os.scandir(folder)}
    except OSError:
        return []
    return recognise(folder, prefix, names)


def _text(raw: bytes) -> str:
    return about.cleaned(raw.decode("utf-8", "replace"))


def built(docs: Path) -> str | None:
    """What a documentation build under DOCS calls itself: Sphinx's "PROJECT VERSION", MkDocs' site name."""
    for build in _builds(docs):
        if build.generator is SPHINX:
            head = generated.head(build.folder, "objects.inv", _INVENTORY_HEAD) or b""
            project, version = _PROJECT.search(head), _VERSION.search(head)
            if project is not None and (name := _text(project[1])):
                return about.cleaned(f"{name} {_text(version[1]) if version is not None else ''}")
        if build.generator is MKDOCS:
            title = _TITLE.search(generated.head(build.folder, "404.html", _PAGE_HEAD) or b"")
            if title is not None and (name := _text(title[1])):
                return name
    return None


class Titles:
    """The documents' titles, counted by their suffix after the last separator."""

    def __init__(self) -> None:
        self.documents = 0
        self.suffixes: Counter[str] = Counter()

    def add(self, title: str | None) -> None:
        self.documents += 1
        parts = _SUFFIX.split(title or "")
        if len(parts) > 1 and (suffix := about.cleaned(parts[-1])):
            self.suffixes[suffix] += 1

    def common(self) -> str | None:
        """The suffix that at least half the documents' titles (and two or more) share, or None."""
        if not self.suffixes:
            return None
        suffix, number = self.suffixes.most_common(1)[0]
        return suffix if number >= 2 and 2 * number >= self.documents else None


def folder_name(docs: Path | Location) -> str:
    """DOCS's own name, a bucket prefix's last part ("documents" for a folder without one, such as /)."""
    name = docs.resolve().name if isinstance(docs, Path) else (docs.prefix or docs.bucket or "").rpartition("/")[2]
    return about.cleaned(name) or "documents"
