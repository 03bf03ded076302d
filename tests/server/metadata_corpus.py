"""Documents with metadata of every kind the indexer reads, for the filter tests (server and end to end).

Every document holds the word `sprocket`, so that every one matches the query; which ones a filter keeps is
what the tests check. `deep_docs` adds many documents that rank above the tagged ones, for the depth tests.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.server import corpus
from tests.support.documents import Line, docx_bytes, make_pdf
from tests.support.embedding_server import EmbeddingServer
from tests.support.properties import with_info

QUERY = "sprocket"
MODEL = "test-8"
HOSTILE_TAGS = ["%", "a'b", "x_y", "'; DROP TABLE documents; --", "back\\slash"]

DOCS: dict[str, str] = {
    "guide/install.md": (
        "---\ntitle: Installing\ntags: [Setup, Linux]\ndate: 2024-01-10\nauthor: Ann\n---\n"
        "# Installing\n\nFit the sprocket to the hub, then tighten the lockring.\n"
    ),
    "guide/upgrade.md": (
        "---\ntags: setup\ndate: 2024-06-30\n---\n# Upgrading\n\nSwap the old sprocket for a wider one.\n"
    ),
    "notes/archive.md": (
        "---\nkeywords: Archive, SETUP\ndate: 2023-03-03\n---\n# Old notes\n\nThe sprocket of 2023 wore out fast.\n"
    ),
    "notes/undated.md": "---\ntags: [linux]\n---\n# Undated\n\nA sprocket note that says nothing of when.\n",
    "notes/odd.md": (
        "---\ntags: [3, 2024, {nested: map}, [a, list], null]\ndate: 2024-13-45\nnested: {a: 1}\nratio: .nan\n"
        "blob: !!binary aGVsbG8=\ncount: 7\n---\n# Odd\n\nA sprocket page with front matter of odd types.\n"
    ),
    "web/page.html": (
        '<html><head><title>Web page</title><meta name="keywords" content="Setup, Web">'
        '<meta name="date" content="2024-02-29"><meta name="description" content="A page about sprockets.">'
        "</head><body><h1>Web page</h1><p>The sprocket page of the site.</p></body></html>"
    ),
    "plain.txt": "A plain sprocket text without any metadata.\n",
    "hostile.md": (
        '---\ntags:\n  - "%"\n  - "a\'b"\n  - x_y\n  - "\'; DROP TABLE documents; --"\n  - \'back\\slash\'\n---\n'
        "# Hostile\n\nA sprocket page whose tags look like SQL and patterns.\n"
    ),
}

# What each filter keeps of DOCS and the two binary files (sources).
SETUP = {"guide/install.md", "guide/upgrade.md", "notes/archive.md", "web/page.html", "manual.pdf"}
LINUX = {"guide/install.md", "notes/undated.md", "report.docx"}
SINCE_2024 = {"guide/install.md", "guide/upgrade.md", "web/page.html", "manual.pdf"}
UNTIL_2023 = {"notes/archive.md", "report.docx"}
EVERY = {*DOCS, "manual.pdf", "report.docx"}


def binary_docs() -> dict[str, bytes]:
    """A PDF and a Word document with properties: keywords and a creation date."""
    import docx

    pdf = with_info(
        make_pdf([[Line("The sprocket manual, printed.", 11, 700)]]),
        {"Title": "Manual", "Keywords": "Setup; PDF", "CreationDate": "D:20240515120000Z", "Author": "Cy"},
    )
    document = docx.Document()
    document.core_properties.keywords = "docx, Linux"
    document.core_properties.created = datetime(2022, 12, 31, 23, 0, tzinfo=UTC)
    document.add_heading("Report", level=1)
    document.add_paragraph("A report on the sprocket.")
    return {"manual.pdf": pdf, "report.docx": docx_bytes(document)}


@pytest.fixture(scope="module")
def endpoint():
    """The embedding endpoint of the tests, for a module's tables and searches."""
    with EmbeddingServer() as server:
        yield server


def environ(endpoint: EmbeddingServer) -> dict[str, str]:
    """The settings that embed with `endpoint`: for `lancelot-index --embed` and for the server."""
    return {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": endpoint.url, "EMBEDDING_MODEL": MODEL}


def write(folder: Path, extra: dict[str, str] | None = None) -> Path:
    corpus.write_docs(folder, {**DOCS, **(extra or {})})
    for name, data in binary_docs().items():
        (folder / name).write_bytes(data)
    return folder


def deep_docs(count: int = 40) -> dict[str, str]:
    """`count` untagged pages that say `sprocket chain` over and over (ranked first by text and by vectors), and
    three pages tagged `deep`, dated 2020, that say it once among many other words (ranked last)."""
    docs = {
        f"crowd/page{n:02}.md": f"# Crowd {n}\n\nSprocket chain, sprocket chain: sprocket chain number {n}.\n"
        for n in range(count)
    }
    filler = " ".join(f"filler{n}" for n in range(150))
    for n in range(3):
        docs[f"deep/page{n}.md"] = (
            f"---\ntags: [Deep]\ndate: 2020-0{n + 1}-01\n---\n# Deep {n}\n\n{filler} a sprocket once {filler}\n"
        )
    return docs


DEEP = {"deep/page0.md", "deep/page1.md", "deep/page2.md"}
