"""One way of checking a bearer token: the protocol every auth method implements, and its refusal.

    static tokens (`tokens.py`)  ─┐
    JWTs (`oauth.py`)            ─┴→ Verifier.verify(token) → Principal (`callers.py`), or Rejected

Adding a method: a module beside `tokens.py` whose class has `verify`, and `bearer.py` choosing it from the
settings (`from_settings`) and trying it on a request's token (`Authenticator`).
"""

from __future__ import annotations

from typing import Protocol

from lancelot_server.auth.callers import Principal


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
