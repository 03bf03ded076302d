"""DOCS and DB given the wrong way round (`lancelot-index ./lancelot-db ./docs`), caught before anything is
read or written: the run would otherwise find no documents in the database and take its lock inside the
documents folder. A few folder listings, nothing opened.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from lancelot_indexer.errors import DocsError
from lancelot_indexer.readers.formats import SUFFIXES
from lancelot_schema import folders
from lancelot_schema.storage import Location


def check(docs: Path, db: Path | Location) -> None:
    """Raise `DocsError` when DOCS is a database (or one table of it), or is missing while DB holds documents."""
    database = db.path if isinstance(db, Location) and db.local else db if isinstance(db, Path) else None
    if database is not None and docs.absolute() == database.absolute():
        return  # the tables kept among the documents, on purpose
    tables = _tables(docs)
    if tables is None:
        if not docs.is_dir() and database is not None and _holds_documents(database):
            raise DocsError(
                f"The documents folder {docs} does not exist, and DB {database} holds documents: are the two "
                f"swapped? The documents come first: {_command(database, docs)}"
            )
        return
    # One table's folder (DB/NAME.lance) given as DOCS: the database is the folder that holds it.
    meant = docs.parent if folders.is_table(docs) else docs
    what = f"is a LanceDB database (it holds {_named(tables)})" if meant == docs else f"is a table of {meant}"
    if database is not None and _holds_documents(database):
        raise DocsError(
            f"DOCS {docs} {what} and DB {database} a folder of documents: they look swapped. The documents "
            f"come first: {_command(database, meant)}"
        )
    raise DocsError(
        f"DOCS {docs} {what}, not a folder of documents. The documents come first, then the database: "
        f"{_command('DOCS', meant)}"
    )


def _named(tables: list[str]) -> str:
    listed = ", ".join(repr(name) for name in tables[:3]) + (", …" if len(tables) > 3 else "")
    return f"the table {listed}" if len(tables) == 1 else f"the tables {listed}"


def _tables(docs: Path) -> list[str] | None:
    """The tables of DOCS when it is a database folder (tables, no documents) or one table's folder; else None."""
    if folders.is_table(docs):
        return [docs.name.removesuffix(folders.TABLE_SUFFIX)]
    try:
        tables = list(folders.tables(docs))
    except OSError:
        return None
    return tables if tables and not folders.holds_files(docs, SUFFIXES) else None


def _holds_documents(folder: Path) -> bool:
    """Whether `folder` holds documents and no table."""
    try:
        return not folders.tables(folder) and folders.holds_files(folder, SUFFIXES)
    except OSError:
        return False


def _command(docs: Path | str, db: Path) -> str:
    return f"lancelot-index {shlex.quote(str(docs))} {shlex.quote(str(db))}"
