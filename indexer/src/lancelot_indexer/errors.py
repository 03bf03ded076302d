"""The indexer's errors. `cli.py` turns each into a one-line message and exit status 1.

    IndexerError
    ├── DocsError            DOCS is missing, is not a folder, or yields no documents
    │   └── EmptyDocsError   no documents found (and --allow-empty not given)
    ├── DatabaseError        the database cannot be opened, locked or written
    │   ├── LockedError      another lancelot-index is writing the same database
    │   │   └── ConflictError    another writer committed to the table during this run; Lance refused ours
    │   └── StorageError     the object store cannot be used: no such bucket, credentials, access, network
    ├── ClusterError         --ray cannot be used: Ray is not installed, or the cluster cannot be reached
    └── EmbeddingError       --embed failed for good; the table is left as it was
        ├── EmbeddingKeyError       no API key, or the endpoint refused it (401, 403)
        ├── EmbeddingModelError     the endpoint does not know EMBEDDING_MODEL (404)
        ├── EmbeddingUnreachable    no connection, or no answer in time, after retries
        ├── EmbeddingRateLimited    429 never cleared, or the account's quota is used up
        └── EmbeddingEndpointError  5xx after retries, a refused request, an unusable answer
            └── EmbeddingWidthError vectors of a width other than the table's, or of mixed widths

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


class ConflictError(LockedError):
    """Another writer committed to the table while this run wrote it, and Lance refused this run's commit."""


class StorageError(DatabaseError):
    """The bucket of a database on object storage cannot be used; the message names the URI, never a key."""


class ClusterError(IndexerError):
    """--ray cannot be used; the message names the install command or the address to check."""


class EmbeddingError(IndexerError):
    """Embedding failed for good; the message names the cause and the setting to check."""


class EmbeddingKeyError(EmbeddingError):
    """No API key, or the endpoint refused it."""


class EmbeddingModelError(EmbeddingError):
    """The endpoint does not know the model."""


class EmbeddingUnreachable(EmbeddingError):
    """The endpoint cannot be reached, or never answered in time."""


class EmbeddingRateLimited(EmbeddingError):
    """The rate limit never cleared, or the quota is used up."""


class EmbeddingEndpointError(EmbeddingError):
    """The endpoint kept failing, refused the request, or answered something unusable."""


class EmbeddingWidthError(EmbeddingEndpointError):
    """The vectors' width does not match the table's, or varies within a run."""
