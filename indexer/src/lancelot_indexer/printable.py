"""Names as they are printed: control and other non-printable characters escaped, never raw.

    printable("a\nError: forged.md") -> 'a\\nError: forged.md'

A file name may hold any character but `/` and NUL. Printed raw, a newline in one starts a line of its
own (a fake `Error:` in a CI log), an escape sequence recolours or clears the terminal, and a
right-to-left override reverses what follows. Every name the indexer prints (the summary, log lines,
error messages) goes through `printable`; the table keeps the real name.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with each non-printable character written as Python writes it in a string: \\n, \\x1b, \\u202e."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
