"""Every link of README.md and docs/ leads somewhere, and what a person reads keeps to its words.

`mkdocs build --strict` (in scripts/check) checks the links between the pages of docs/; README is not one
of them, and neither are links to the repository's own files by their GitHub address, so they are checked
here.
"""

from __future__ import annotations

import re

import pytest
from tests.docs import pages

BLOB = f"{pages.REPO_URL}/blob/main/"
README_LINES = 250
# The names that keep "chunk" because another program spells them so, or an option's earlier name.
CHUNK_NAMES = re.compile(r"`--chunk-size`, its earlier name|chunkSource")
# Pages written for people working on Lancelot, which quote commands and history as they were, or name
# code (the map names the chunking/ folder).
CONTRIBUTORS = {"docs/decisions.md", "docs/benchmarks.md", "docs/map.md"}


def broken(name: str, document: str) -> list[str]:
    """The links of `document` (README.md or docs/NAME.md) that lead to no file or no heading."""
    here = (pages.ROOT / name).parent
    found = []
    for target in pages.links(document):
        path, _, anchor = target.partition("#")
        if target.startswith(BLOB):
            exists, heading_in = (pages.ROOT / path.removeprefix(BLOB)).exists(), None
        elif path == pages.REPO_URL:
            exists, heading_in = True, pages.readme()
        elif "://" in target or target.startswith("mailto:"):
            continue
        elif not path:
            exists, heading_in = True, document
        else:
            file = (here / path).resolve()
            exists = file.exists()
            heading_in = file.read_text(encoding="utf-8") if exists and file.suffix == ".md" else None
        if not exists or (anchor and (heading_in is None or anchor not in pages.anchors(heading_in))):
            found.append(target)
    return found


@pytest.mark.parametrize("name", sorted(pages.documents()))
def test_every_link_leads_to_a_file_and_heading(name):
    assert broken(name, pages.documents()[name]) == []


def test_readme_links_to_the_pages_and_its_own_sections():
    targets = set(pages.links(pages.readme()))
    assert {"#quick-start", "docs/clients.md#claude-code", "docs/settings.md", "docs/troubleshooting.md"} <= targets


def test_a_broken_link_is_caught():
    document = "# One\n[a](#one) [b](#two) [c](docs/nowhere.md) [d](docs/clients.md#nowhere) [e](LICENSE)\n"
    document += f"[f]({BLOB}nowhere.py) [g]({BLOB}LICENSE) [h]({pages.REPO_URL}#nowhere) [i](https://example.com/)\n"
    assert broken("README.md", document) == [
        "#two",
        "docs/nowhere.md",
        "docs/clients.md#nowhere",
        f"{BLOB}nowhere.py",
        f"{pages.REPO_URL}#nowhere",
    ]


def test_the_readme_stays_a_front_door():
    assert len(pages.readme().splitlines()) <= README_LINES


@pytest.mark.parametrize("name", sorted(set(pages.documents()) - CONTRIBUTORS))
def test_a_passage_is_never_called_a_chunk(name):
    words = CHUNK_NAMES.sub("", pages.documents()[name])
    assert re.findall(r".{0,40}chunk.{0,40}", words, re.IGNORECASE) == []
