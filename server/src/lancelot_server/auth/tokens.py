"""Static bearer tokens, for deployments without an OAuth authorization server.

Two sources, both read as SHA-256 digests so that no token is kept in memory longer than it takes to hash:

- `LANCELOT_AUTH_TOKENS`: comma-separated tokens, each good for every served table, labelled `env-1`,
  `env-2`, ... in logs. Fixed for the life of the process.
- `LANCELOT_AUTH_TOKENS_FILE`: one token per line, `LABEL SECRET [TABLES]`, `#` starts a comment. SECRET is
  the token itself or `sha256:` and its hex digest (so the file need not hold the token); TABLES is a
  comma-separated list the token is limited to. The file is checked for a change at most once a second,
  so tokens rotate without a restart. A file that cannot be read or parsed after a change accepts no
  token until it is mended (failing closed: a typo must not keep a revoked token alive).

A presented token is hashed and compared with every entry in constant time (`hmac.compare_digest`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import structlog

from lancelot_server.auth.callers import Principal
from lancelot_server.auth.verifier import Rejected

# Shorter tokens can be guessed; the error says how to make a good one.
MIN_TOKEN_LENGTH = 16
GENERATE = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
RECHECK_SECONDS = 1.0
_DIGEST = re.compile(r"sha256:([0-9a-fA-F]{64})")
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}")

log = structlog.get_logger("lancelot.auth")


class TokenFileError(ValueError):
    """The token file cannot be used; the message names the file and line, never a token."""


@dataclass(frozen=True)
class Entry:
    label: str
    digest: bytes
    tables: frozenset[str] | None


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _secret(value: str, where: str) -> bytes:
    hashed = _DIGEST.fullmatch(value)
    if hashed:
        return bytes.fromhex(hashed.group(1))
    if len(value) < MIN_TOKEN_LENGTH:
        raise TokenFileError(
            f"{where}: the token is shorter than {MIN_TOKEN_LENGTH} characters; make one with {GENERATE}"
        )
    return digest(value)


def from_environment(tokens: Iterable[str]) -> list[Entry]:
    """Entries for LANCELOT_AUTH_TOKENS; a ValueError when one is too short."""
    return [
        Entry(f"env-{n}", _secret(token, f"LANCELOT_AUTH_TOKENS token {n}"), None) for n, token in enumerate(tokens, 1)
    ]


def parse(text: str, name: str) -> list[Entry]:
    """The entries of a token file's `text`; `name` (the file) is for error messages."""
    entries: list[Entry] = []
    labels: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{name} line {number}"
        if len(fields) not in (2, 3):
            raise TokenFileError(f"{where}: expected `LABEL TOKEN [TABLE,TABLE...]`, found {len(fields)} fields")
        label = fields[0]
        if not _LABEL.fullmatch(label):
            raise TokenFileError(f"{where}: the label must be letters, digits and ._:@- (at most 64)")
        if label in labels:
            raise TokenFileError(f"{where}: the label {label} is used twice")
        labels |= {label}
        tables = frozenset(t for t in fields[2].split(",") if t) if len(fields) == 3 else None
        entries.append(Entry(label, _secret(fields[1], where), tables or None))
    return entries


class StaticTokens:
    """The `Verifier` for static tokens: environment entries plus the file's, the file re-read when it changes."""

    def __init__(self, tokens: Iterable[str] = (), file: str | None = None) -> None:
        self._fixed = from_environment(tokens)
        self._file = Path(file) if file else None
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._checked = 0.0
        self._from_file: list[Entry] = []
        if self._file is not None:
            # At start a bad file is an error the operator sees at once, not a server that refuses everyone.
            self._stamp = self._stat()
            if self._stamp is None:
                raise TokenFileError(f"LANCELOT_AUTH_TOKENS_FILE {self._file} cannot be read")
            self._from_file = self._read()
            self._checked = time.monotonic()

    def _stat(self) -> tuple[int, int, int] | None:
        assert self._file is not None
        try:
            info = self._file.stat()
        except OSError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def _read(self) -> list[Entry]:
        assert self._file is not None
        try:
            text = self._file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenFileError(f"LANCELOT_AUTH_TOKENS_FILE {self._file} cannot be read ({exc})") from None
        return parse(text, str(self._file))

    def _current(self) -> list[Entry]:
        if self._file is None:
            return self._fixed
        with self._lock:
            now = time.monotonic()
            if now - self._checked >= RECHECK_SECONDS:
                self._checked = now
                stamp = self._stat()
                if stamp != self._stamp:
                    self._stamp = stamp
                    self._reload()
            return self._fixed + self._from_file

    def _reload(self) -> None:
        try:
            self._from_file = self._read()
        except TokenFileError as exc:
            self._from_file = []
            log.error(
                "token_file_unusable", reason=str(exc), effect="no token from the file is accepted until it is mended"
            )
        else:
            log.info("token_file_reloaded", file=str(self._file), tokens=len(self._from_file))

    def verify(self, token: str) -> Principal:
        presented = digest(token)
        found: Entry | None = None
        for entry in self._current():  # every entry compared, so the time taken says nothing about which matched
            if hmac.compare_digest(entry.digest, presented):
                found = entry
        if found is None:
            raise Rejected("the token is not one this server accepts")
        return Principal(label=found.label, tables=found.tables)
