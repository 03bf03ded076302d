"""Which tables a caller sees, and the one way a tool opens a table: the table choice, in one place.

A server serves its default table (LANCEDB_TABLE) and the LANCELOT_TABLES besides it ("*": every table of
the database), default first; a caller sees those the auth layer lets it (`callers.may_see`). A table
outside the caller's scope is answered exactly as a table that does not exist, and a message that lists
tables lists only the ones the caller may see: an error never tells a caller that a table it may not see
is there. Within the scope, a message names the tables the database holds, served or not (names only),
and the one nearest a mistyped name.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, TypeVar

from lancelot_schema.settings import Settings
from lancelot_server.auth import callers
from lancelot_server.errors import InvalidRequest, TableNotFound, shown
from lancelot_server.storage.store import Store

# Most tables one search may name: each is searched in turn (and embedded once), so the cost grows with each.
MAX_TABLES = 8
EVERY = "*"
SERVE_IT = "Set LANCEDB_TABLE to it, or add it to LANCELOT_TABLES."

H = TypeVar("H")


def asked(table: str | Sequence[str] | None) -> list[str] | None:
    """The tables a search names, checked: one name, or 1 to MAX_TABLES distinct names; None when it names none."""
    if table is None:
        return None
    names = [table] if isinstance(table, str) else table
    if not isinstance(names, Sequence) or not all(isinstance(name, str) for name in names):
        raise InvalidRequest("table must be a table name or a list of table names.")
    if not 1 <= len(names) <= MAX_TABLES:
        raise InvalidRequest(f"table must name 1 to {MAX_TABLES} tables; got {len(names)}.")
    for position, name in enumerate(names):
        if not name:
            raise InvalidRequest("table holds an empty name; pass table names as lancedb_status lists them.")
        if name in names[:position]:
            raise InvalidRequest(f"table names {shown(name)} twice; name each table once.")
    return list(names)


class Tables:
    """The tables of one store that a server serves, seen through the caller of the request being answered."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    @property
    def _every(self) -> bool:
        return EVERY in (self.settings.tables or ())

    def served(self, there: list[str] | None = None) -> list[str]:
        """The default table first, then LANCELOT_TABLES as configured, or (with "*") every other table sorted.

        Lists the database only with "*" (`there`, when the caller has listed it already).
        """
        if self._every:
            others = self.store.table_names() if there is None else sorted(there)
        else:
            others = list(self.settings.tables or ())
        return list(dict.fromkeys([self.settings.table, *others]))

    def visible(self, there: list[str] | None = None) -> list[str]:
        """The served tables the caller may see, in served order (present in the database or not)."""
        return [name for name in self.served(there) if callers.may_see(name)]

    def present(self) -> list[str]:
        """The served tables the caller sees that the database holds: what resources list."""
        there = self.store.table_names()
        return [name for name in self.visible(there) if name in there]

    def held(self) -> list[str]:
        """Every table of the database the caller may see, served or not: the served ones first, in served
        order, then the others sorted. What a message or the status may name."""
        there = self.store.table_names()
        served = [name for name in self.visible(there) if name in there]
        return served + [name for name in there if name not in served and callers.may_see(name)]

    def sees(self, name: str) -> bool:
        served = self._every or name == self.settings.table or name in (self.settings.tables or ())
        return served and callers.may_see(name)

    def default(self) -> str:
        """The table of a request that names none: LANCEDB_TABLE, or the first served table the caller sees."""
        if callers.may_see(self.settings.table):
            return self.settings.table
        visible = self.visible()
        if not visible:
            raise TableNotFound(
                f"No table of the database {self.store.db_path} is served to this caller (tables: none). "
                "Ask for a token that may read one."
            )
        return visible[0]

    def chosen(self, table: str | Sequence[str] | None) -> list[str]:
        """The tables a search is for: those it names (checked), or the caller's default table."""
        return asked(table) or [self.default()]

    def open(self, name: str, pinned: bool = False) -> Any:
        """The table's handle (`pinned`: at its version now, `LanceTable.pinned`); a table the caller does not see
        is refused exactly as a missing one."""
        if not self.sees(name):
            raise TableNotFound(self.missing(name))
        try:
            return self.store.table(name, pinned)
        except TableNotFound:
            raise TableNotFound(self.missing(name)) from None

    def missing(self, name: str) -> str:
        """Why table `name` cannot be opened, with the tables the caller may use instead."""
        held, served = self.held(), self.present()
        database = self.store.db_path
        if name in held:  # in the caller's scope and in the database: only the server's choice leaves it out
            return (
                f"Table {shown(name)} is in the database {database} but not served (served: {_names(served)}). "
                f"{SERVE_IT}"
            )
        holds = f"which holds {_names(held)}" if held else "which holds no table"
        if len(served) < len(held):
            holds += f" (served: {_names(served)})"
        said = f"Table {shown(name)} is not in the database {database}, {holds}."
        nearest = difflib.get_close_matches(name, held, n=1)
        if not nearest:
            return f"{said} Set LANCEDB_TABLE or pass `table`, or build it with lancelot-index."
        advice = "Pass it as `table`, or set LANCEDB_TABLE to it." if nearest[0] in served else SERVE_IT
        return f"{said} Did you mean {nearest[0]!r}? {advice}"


def _names(tables: list[str]) -> str:
    return ", ".join(repr(table) for table in tables) if tables else "none"


def merged(rankings: Sequence[list[H]], limit: int) -> list[H]:
    """Several tables' hits as one list by rank: every table's first hit, in the order the tables were asked,
    then every table's second, and so on, cut at `limit`. Scores of different tables are never compared:
    BM25 scores depend on each table's statistics, and a table may have fallen back to another search."""
    depth = max(map(len, rankings), default=0)
    return [ranking[rank] for rank in range(depth) for ranking in rankings if rank < len(ranking)][:limit]
