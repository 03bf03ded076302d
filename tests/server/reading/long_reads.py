"""Helpers for the read tests: documents long enough to need several replies, and a walk that follows
`next` the way an assistant would, checking every reply on the way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lancedb


def long_markdown(sections: int = 40) -> str:
    """A Markdown manual with sections of very different lengths, a code fence and a long paragraph."""
    parts = ["---\ntitle: The long manual\n---\n", "# The long manual\n"]
    for number in range(sections):
        words = " ".join(f"s{number}w{word}" for word in range(15 + (number * 37) % 400))
        parts.append(f"## Section {number}\n\n{words}\n")
        if number % 7 == 3:
            parts.append("```\n" + "\n".join(f"line {line} of code" for line in range(30)) + "\n```\n")
    return "\n".join(parts)


def unbroken_paragraphs(count: int, length: int) -> str:
    """Plain text whose paragraphs are longer than any small budget; some have no space to cut at."""
    paragraphs = []
    for number in range(count):
        if number % 3 == 2:
            paragraphs.append("x" * length)  # one word longer than the budget
        else:
            paragraphs.append(" ".join(f"p{number}w{word}" for word in range(length // 8)))
    return "\n\n".join(paragraphs) + "\n"


def stored_texts(db: Path, table: str, source: str) -> list[str]:
    """The passages of `source` as the indexer stored them, in passage order."""
    rows = lancedb.connect(str(db)).open_table(table).to_arrow().to_pylist()
    mine = sorted((row for row in rows if row["path"] == source), key=lambda row: row["passage"])
    return [row["text"] for row in mine]


def walk(
    read: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]], first: dict[str, Any], budget: int
) -> list[dict[str, Any]]:
    """Follow `next` from `first` until the document ends; every reply's text within `budget`.

    `read(arguments)` returns a reply's Markdown text and its structured content. Returns the passages
    (pieces) in the order they came.
    """
    arguments = {**first, "budget": budget}
    pieces: list[dict[str, Any]] = []
    for _ in range(100_000):
        text, reply = read(arguments)
        assert len(text) <= budget, (len(text), budget)
        assert reply["passages"], reply
        pieces.extend(reply["passages"])
        if "next" not in reply:
            assert reply["end"] == "document"
            assert text.rstrip().endswith("the end of the document._")
            return pieces
        assert reply["end"] == "budget"
        assert 'Continue with {"source": ' in text
        arguments = {**reply["next"], "budget": budget}
    raise AssertionError("the walk never ended")


def joined(pieces: list[dict[str, Any]]) -> list[str]:
    """Each passage's text put back together from its pieces, checking that each piece follows the last."""
    texts: list[str] = []
    for piece in pieces:
        offset = piece.get("offset", 0)
        if offset:
            assert piece["number"] == len(texts) - 1, "a continued piece follows its passage's previous piece"
            assert offset == len(texts[-1]), "pieces neither overlap nor leave a gap"
            texts[-1] += piece["text"]
        else:
            assert piece["number"] == len(texts), "passages come once each, in order"
            texts.append(piece["text"])
    return texts
