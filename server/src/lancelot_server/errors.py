"""The server's errors: each one a problem the person or the assistant can act on.

    LancelotError                  every error below; its message says what is wrong and how to fix it
    ├── DatabaseNotFound           LANCEDB_PATH is unset, missing, not a folder or not a usable URI
    ├── StorageError               the object store holding LANCEDB_PATH refused or could not be reached
    ├── TableNotFound              the table is not in the database
    ├── TableLayoutError           the table lacks the text column, or cannot be read
    ├── InvalidRequest             a tool argument the schema admits but the server cannot use
    ├── TableChanged               a rebuild replaced the table between the queries of one read
    └── VectorSearchUnavailable    vector search cannot run now; never reaches the client as an
                                   error, it becomes the `note` of a text-search fallback

`app.py` turns every `LancelotError` into an MCP tool result with `isError: true`, in one place.
"""

from __future__ import annotations


class LancelotError(Exception):
    """A problem with the request or the database, described for a person."""


class DatabaseNotFound(LancelotError):
    pass


class StorageError(LancelotError):
    pass


class TableNotFound(LancelotError):
    pass


class TableLayoutError(LancelotError):
    pass


class InvalidRequest(LancelotError):
    pass


class TableChanged(LancelotError):
    pass


class VectorSearchUnavailable(LancelotError):
    pass


def shown(value: str, limit: int = 80) -> str:
    """A client's value, quoted for a message, without echoing a long one back."""
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def shown_number(value: int) -> str:
    """A client's whole number, for a message: with thousands separators, or its length when that is long."""
    written = f"{value:,}"
    return written if len(written) <= 40 else f"a number of {len(str(abs(value))):,} digits"
