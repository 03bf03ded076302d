"""How the indexer's messages count things."""

from __future__ import annotations


def count(number: int, noun: str) -> str:
    """`1 passage`, `2 passages`: every noun in the indexer's messages takes a plain -s."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
