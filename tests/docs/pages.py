"""README.md and the pages of docs/ as a person reads them: sections under headings, their code blocks, links.

Every lookup asserts that what it looks for is there, so a test never passes over a section or a block
that was moved or renamed.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# The repository's address: docs/ links to a file outside it by this URL (MkDocs cannot check those).
REPO_URL = "https://github.com/lancelot-search/lancelot"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^(#{1,6}) (.+)$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def page(name: str) -> str:
    """The text of `docs/<name>`."""
    path = DOCS / name
    assert path.is_file(), f"docs/{name} is gone"
    return path.read_text(encoding="utf-8")


def documents() -> dict[str, str]:
    """README.md and every page of docs/, by their path in the repository."""
    found = {"README.md": readme()}
    found |= {f"docs/{path.name}": path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md"))}
    return found


def _lines_outside_code(document: str) -> list[tuple[str, bool]]:
    """Each line with whether it lies outside fenced code (where a `#` starts a heading)."""
    marked = []
    inside = False
    for line in document.splitlines():
        if line.startswith("```"):
            inside = not inside
            marked.append((line, False))
        else:
            marked.append((line, not inside))
    return marked


def headings(document: str) -> list[tuple[int, str]]:
    """(level, title) of every heading outside fenced code, in order."""
    found = []
    for line, outside in _lines_outside_code(document):
        match = _HEADING.match(line) if outside else None
        if match:
            found.append((len(match.group(1)), match.group(2).strip()))
    return found


def section(title: str, document: str) -> str:
    """What sits under the heading `title` (any level), up to the next heading of the same level or higher."""
    lines = _lines_outside_code(document)
    start: int | None = None
    level = 0
    for number, (line, outside) in enumerate(lines):
        match = _HEADING.match(line) if outside else None
        if match is None:
            continue
        if start is None:
            if match.group(2).strip() == title:
                start, level = number + 1, len(match.group(1))
        elif len(match.group(1)) <= level:
            return "\n".join(line for line, _ in lines[start:number]) + "\n"
    assert start is not None, f"no heading {title!r}"
    return "\n".join(line for line, _ in lines[start:]) + "\n"


def code_blocks(body: str, language: str) -> list[str]:
    """The contents of the fenced blocks of `language` in `body`, in order; at least one must be there."""
    blocks = [content for lang, content in _FENCE.findall(body) if lang == language]
    assert blocks, f"no ```{language} block where one was expected"
    return blocks


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def site_slug(heading: str) -> str:
    """A heading's anchor as MkDocs makes it (Python-Markdown's toc): ASCII, and runs of spaces and hyphens as one."""
    ascii_only = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_only).strip().lower())


def anchors(document: str) -> set[str]:
    """The anchors of the headings that GitHub and the site both give the same one: the only safe link targets."""
    return {slug(title) for _, title in headings(document) if slug(title) == site_slug(title)}


def links(document: str) -> list[str]:
    """The targets of the document's Markdown links, outside fenced code."""
    return _LINK.findall(_FENCE.sub("", document))


def assert_runs_the_installed_server(entry: dict) -> str:
    """The entry starts an installed `lancelot` by its absolute path, with an absolute LANCEDB_PATH; returns it."""
    assert entry["command"].startswith("/") and entry["command"].endswith("/lancelot"), entry["command"]
    assert entry.get("args", []) == []
    return _database_path(entry)


def assert_runs_the_published_server(entry: dict) -> str:
    """The entry launches `uvx lancelot-server` with an absolute LANCEDB_PATH; returns that path."""
    assert entry["command"] == "uvx"
    assert entry["args"] == ["lancelot-server"]
    return _database_path(entry)


def _database_path(entry: dict) -> str:
    path = entry["env"]["LANCEDB_PATH"]
    # Absolute, or a client variable that expands to one (an input prompt, the workspace folder).
    assert path.startswith(("/", "${")), path
    return path
