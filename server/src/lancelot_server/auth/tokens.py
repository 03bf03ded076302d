"""Static bearer tokens, for deployments without an OAuth authorization server.

Two sources, both read as SHA-256 digests so that no token is kept in memory longer than it takes to hash:

- `LANCELOT_AUTH_TOKENS`: comma-separated tokens, each good for every served table, labelled `env-1`,
  `env-2`, ... in logs. Fixed for the life of the process.
- `LANCELOT_AUTH_TOKENS_FILE`: one token per line, `LABEL SECRET [TABLES]`, `#` starts a comment. SECRET is
  the token itself or `sha256:` and its hex digest (so the file need not hold the token); TABLES is a
  comma-separated list the token is limited to. The file is read again at most once a second, and a
  change of its content (its digest: a rewrite may keep inode, size and mtime) replaces the token set
  whole, so tokens rotate without a restart. A file that cannot be read or parsed accepts no token until
  it is mended (failing closed: a typo must not keep a revoked token alive), except while it may still be
  being written (changed less than `WRITING_SECONDS` ago): then the last good set serves meanwhile. So
  does it while a file so recent has no newline at its end, which a file cut short mid-line would lack.

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
# A file changed less than this ago that does not parse, or lacks its last newline, is taken for one still
# being written.
WRITING_SECONDS = 2.0
KEPT = "the last good tokens serve meanwhile"
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
        self._checked = 0.0
        self._seen: bytes | None = None  # the digest of the content `_from_file` was made from, or refused
        self._from_file: list[Entry] = []
        if self._file is not None:
            # At start a bad file is an error the operator sees at once, not a server that refuses everyone.
            content = self._read()
            self._from_file = self._parse(content)
            self._seen = hashlib.sha256(content).digest()
            self._checked = time.monotonic()

    def _read(self) -> bytes:
        assert self._file is not None
        try:
            return self._file.read_bytes()
        except OSError as exc:
            raise TokenFileError(f"LANCELOT_AUTH_TOKENS_FILE {self._file} cannot be read ({exc})") from None

    def _parse(self, content: bytes) -> list[Entry]:
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TokenFileError(f"LANCELOT_AUTH_TOKENS_FILE {self._file} is not UTF-8 ({exc})") from None
        return parse(text, str(self._file))

    def _current(self) -> list[Entry]:
        if self._file is None:
            return self._fixed
        with self._lock:
            now = time.monotonic()
            if now - self._checked >= RECHECK_SECONDS:
                self._checked = now
                self._reload()
            return self._fixed + self._from_file

    def _reload(self) -> None:
        """Read, parse, then swap: the token set is never made from part of a file."""
        try:
            content = self._read()
            seen = hashlib.sha256(content).digest()
            if seen == self._seen:
                return
            # A file cut short mid-line may still parse, as a token without its tables limit: wait for its end.
            if not content.endswith(b"\n") and self._being_written():
                log.warning("token_file_being_written", reason="its last line has no end yet", effect=KEPT)
                return
            entries = self._parse(content)
        except TokenFileError as exc:
            if self._being_written():
                log.warning("token_file_being_written", reason=str(exc), effect=KEPT)
            else:
                self._unusable(str(exc))
            return
        self._from_file, self._seen = entries, seen
        log.info("token_file_reloaded", file=str(self._file), tokens=len(entries))

    def _unusable(self, reason: str) -> None:
        if self._seen is not None:  # logged once, when the file breaks
            log.error("token_file_unusable", reason=reason, effect="no token from the file until it is mended")
        self._from_file, self._seen = [], None

    def _being_written(self) -> bool:
        assert self._file is not None
        try:
            age = time.time() - self._file.stat().st_mtime
        except OSError:
            return False  # gone: nothing is being written
        return 0 <= age < WRITING_SECONDS

    def verify(self, token: str) -> Principal:
        presented = digest(token)
        found: Entry | None = None
        for entry in self._current():  # every entry compared, so the time taken says nothing about which matched
            if hmac.compare_digest(entry.digest, presented):
                found = entry
        if found is None:
            raise Rejected("the token is not one this server accepts")
        return Principal(label=found.label, tables=found.tables)
