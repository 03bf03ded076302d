"""The indexer's errors. `cli.py` turns each into a one-line message and exit status 1.

    IndexerError
    ├── DocsError            DOCS is missing, is not a folder, or yields no documents
    │   └── EmptyDocsError   no documents found (and --allow-empty not given)
    └── DatabaseError        the database cannot be opened, locked or written
        └── LockedError      another lancelot-index is writing the same database

A file that cannot be used is not an error: it is skipped and listed in the report.
"""

from __future__ import annotations


class IndexerError(Exception):
    """Base class: the message is complete and meant for the person who ran the command."""


class DocsError(IndexerError):
    """The documents folder cannot be used."""


class EmptyDocsError(DocsError):
    """The documents folder yields no documents; the table is left as it was."""


class DatabaseError(IndexerError):
    """The database cannot be opened or written; the previous table is left as it was."""


class LockedError(DatabaseError):
    """Another indexer holds the database's lock."""
