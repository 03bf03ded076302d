"""README.md as a person reads it: sections under `## ` headings, the code blocks in them, its anchors."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def text() -> str:
    return README.read_text(encoding="utf-8")


def section(title: str, document: str | None = None) -> str:
    """What sits under the `## title` heading, up to the next `## ` heading."""
    document = text() if document is None else document
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", document, re.MULTILINE | re.DOTALL)
    assert match, f"README.md has no '## {title}' section"
    return match.group(1)


def code_blocks(body: str, language: str) -> list[str]:
    """The contents of the fenced blocks of `language` in `body`, in order."""
    return [content for lang, content in _FENCE.findall(body) if lang == language]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(document: str) -> set[str]:
    outside_code = _FENCE.sub("", document)
    return {slug(heading) for heading in re.findall(r"^#{1,6} (.+)$", outside_code, re.MULTILINE)}


def assert_runs_the_server(entry: dict) -> str:
    """The client entry launches `uvx lancelot-server` with a non-relative LANCEDB_PATH; returns that path."""
    assert entry["command"] == "uvx"
    assert entry["args"] == ["lancelot-server"]
    path = entry["env"]["LANCEDB_PATH"]
    # Absolute, or a client variable that expands to one (an input prompt, the workspace folder).
    assert path.startswith(("/", "${")), path
    return path
