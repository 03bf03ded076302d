"""Who is asking, for the request being answered: set by the auth layer, read where tables are chosen.

A leaf with no imports of ours, so `storage/tables.py` can narrow what a caller sees without knowing how the
caller was authenticated (`verifier.py`). stdio and an unauthenticated HTTP server never set it: the caller
may see every table the server serves.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """An authenticated caller. `label` is what logs may show (never the token); `tables` None: no limit."""

    label: str
    tables: frozenset[str] | None = None
    scopes: frozenset[str] = frozenset()


# Context variables follow the request into the SDK's task and the worker thread that runs a tool.
current: ContextVar[Principal | None] = ContextVar("lancelot_principal", default=None)


def may_see(table: str) -> bool:
    """Whether the caller of the request being answered may see `table` (the server serves it: checked apart)."""
    principal = current.get()
    return principal is None or principal.tables is None or table in principal.tables
