"""Who is asking, for the request being answered: set by the auth layer, read where tables are chosen.

A leaf with no imports of ours, so `tools.py` can narrow what a caller sees without knowing how the caller
was authenticated. stdio and an unauthenticated HTTP server never set it: the caller may see every table
the server serves.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol


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


class Rejected(Exception):
    """A bearer token that does not pass. `reason` goes to the log and the answer's error_description, so it
    never holds the token; `status` 401 (error `invalid_token`) or 403 (error `insufficient_scope`)."""

    def __init__(self, reason: str, *, status: int = 401, error: str = "invalid_token", scope: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.error = error
        self.scope = scope  # with 403: the scopes the request needs, for the challenge


class Verifier(Protocol):
    """One way of checking a bearer token (static tokens, JWTs): the caller it stands for, or `Rejected`.

    Synchronous; the auth layer runs one that may do I/O (fetching a JWKS) in a worker thread.
    """

    def verify(self, token: str) -> Principal: ...
