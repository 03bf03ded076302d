"""Where the database is, as the indexer's modules take it, and what Lance's errors there mean.

    located(db)                       # a Path (a folder, as before) or a Location, as a Location
    options(location)                 # the storage options Lance is given for it
    failure(location, error, table)   # Lance's error as the indexer's one-line error, or None
    with storage_failures(location):  # every such error inside raised as that line

On object storage Lance quotes requests and answers at length; `lancelot_schema.storage.failure` says in one
line what is wrong (no such bucket, refused or missing credentials, denied, unreachable), naming the URI and
never a key. A commit that Lance refused because another writer committed to the table in between
(`CommitConflictError`, "Retryable commit conflict") is a `ConflictError`. No Lance import here.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from lancelot_indexer.errors import ConflictError, IndexerError, StorageError
from lancelot_schema import storage
from lancelot_schema.storage import Location

# What Lance's refused commits say (CommitConflictError; a plain OSError for an overwrite that was preempted).
_CONFLICTS = ("commit conflict", "incompatible transaction")
# Where in Lance's source an error was raised, which it appends to the message: ", /path/to/file.rs:319:13".
_RUST_PLACES = re.compile(r",\s*/\S+\.rs:\d+:\d+")


def options(location: Location) -> dict[str, str] | None:
    """The storage options Lance is given for `location` (None when there are none: a folder)."""
    return dict(location.options) or None


def located(db: Path | Location) -> Location:
    """`db` as a Location: a Path is a local folder, made absolute (never read as a URI)."""
    return db if isinstance(db, Location) else Location(uri=str(Path(db).absolute()))


def conflict(error: BaseException) -> bool:
    """Whether `error` is Lance refusing a commit because another one came first."""
    text = str(error).lower()
    return type(error).__name__ == "CommitConflictError" or any(sign in text for sign in _CONFLICTS)


def failure(location: Location, error: BaseException, table: str | None = None) -> IndexerError | None:
    """The indexer's error for what Lance raised on the database at `location`; None when it is none of
    these (a local folder's own failure, a damaged table: the caller reports it as before)."""
    if conflict(error):
        named = f"table {table!r} of {location}" if table is not None else str(location)
        return ConflictError(
            f"Another writer committed to {named} while this lancelot-index was writing it, so Lance refused this "
            "run's commit: the table holds the other writer's change. Run lancelot-index again once it is done."
        )
    problem = storage.failure(location, error, "write")
    if problem is not None:
        return StorageError(problem)
    if not location.local and "LanceError(" in str(error):
        # Another failure of the object store (e.g. no region found for the bucket): Lance's first line, which
        # names no key, rather than a traceback.
        text = _RUST_PLACES.sub("", str(error)).strip().splitlines()[0]
        return StorageError(f"Lance could not use {location}: {text[:300]}")
    return None


@contextlib.contextmanager
def storage_failures(location: Location) -> Iterator[None]:
    """Raise what Lance raises inside as the indexer's one-line error, where `failure` knows it."""
    try:
        yield
    except IndexerError:
        raise
    except Exception as exc:
        known = failure(location, exc)
        if known is None:
            raise
        raise known from exc
