"""Documents as MCP resources: their URIs, the listing in pages, and what reading one returns.

    lancelot://TABLE/SOURCE          a document (SOURCE with its path segments percent-encoded)
    lancelot://TABLE/SOURCE?from=N   the same, from passage N on (and `&offset=K` into it)

`resources/list` lists the documents of every served table the caller sees (`tables.Tables`), table by
table in served order, in pages of `PAGE` (the protocol's cursor names the table and last source of the
page before); `resources/read` returns what `lancedb_read` with `source` returns, as Markdown within the
default budget, ending with the arguments that read on: a table the caller does not see reads as missing.
SDK-free: `app.py` wraps these in the protocol's types.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, quote, unquote

from lancelot_schema.settings import Settings
from lancelot_server.errors import InvalidRequest, shown
from lancelot_server.reading import documents
from lancelot_server.reading.read import DEFAULT_BUDGET, Reading
from lancelot_server.storage.store import describe
from lancelot_server.storage.tables import Tables

SCHEME = "lancelot://"
TEMPLATE = "lancelot://{table}/{+source}"
MIME_TYPE = "text/markdown"
PAGE = 100
# Longest cursor read: ours name a table and a source (a path of at most 4,096 bytes, JSON- and base64-encoded).
MAX_CURSOR = 32_768
_NUMBER = re.compile(r"[0-9]{1,9}")


@dataclass(frozen=True)
class Listed:
    uri: str
    source: str
    title: str | None
    table: str


@dataclass(frozen=True)
class Address:
    table: str
    source: str
    start: int | None = None
    offset: int | None = None


def uri(table: str, source: str) -> str:
    return f"{SCHEME}{table}/{quote(source, safe='/')}"


def parse(address: str) -> Address:
    """The table, source and starting point a `lancelot://` URI names; an error names what is wrong."""
    if not address.startswith(SCHEME):
        raise InvalidRequest(f"{shown(address)} is not a Lancelot document: its URI starts with {SCHEME}TABLE/.")
    table, slash, rest = address[len(SCHEME) :].partition("/")
    # A `?` the listing wrote is %3F; a literal one starts the query (from, offset).
    path, _, query = rest.partition("?")
    source = _decoded(path.partition("#")[0], address) if slash else ""
    if not table or not source:
        raise InvalidRequest(f"{shown(address)} names no document; write {SCHEME}TABLE/SOURCE.")
    numbers: dict[str, int] = {}
    for name, values in parse_qs(query, keep_blank_values=True).items():
        # ASCII digits only: str.isdigit() admits "²" and "٣", which int() then refuses or reads as 3.
        if name not in ("from", "offset") or len(values) != 1 or not _NUMBER.fullmatch(values[0]):
            raise InvalidRequest(
                f"{shown(address)}: the query may hold from=N and offset=N only, N in ASCII digits (at most 9)."
            )
        numbers[name] = int(values[0])
    return Address(table, source, numbers.get("from"), numbers.get("offset"))


def _decoded(path: str, address: str) -> str:
    """The source a URI's path names, its percent-escapes read as UTF-8 bytes; an error when they are not UTF-8."""
    try:
        return unquote(path, errors="strict")
    except UnicodeDecodeError as exc:
        escapes = "".join(f"%{byte:02X}" for byte in exc.object[exc.start : exc.end])
        raise InvalidRequest(
            f"{shown(address)}: its source is not UTF-8 once percent-decoded ({escapes}); percent-encode each byte "
            "of the source's UTF-8, as resources/list writes it."
        ) from None


class Reader(Protocol):
    """What the resources read through (`tools.Tools`): the tables the caller sees, and lancedb_read."""

    settings: Settings
    tables: Tables

    def read(self, *, source: str, table: str, start: int | None, offset: int | None, budget: int) -> Reading: ...


class Resources:
    """The documents of the tables the caller sees, listed from a catalog kept per table version."""

    def __init__(self, tools: Reader) -> None:
        self.tools = tools
        self._lock = threading.Lock()
        self._catalogs: dict[str, tuple[int, list[tuple[str, str | None]]]] = {}

    def page(self, cursor: str | None) -> tuple[list[Listed], str | None]:
        """One page of documents after `cursor`, and the cursor of the next page (None after the last)."""
        # Tables the database lacks are left out: a listing lists what there is.
        names = self.tools.tables.present()
        at: str | None = names[0] if names else None
        after: str | None = None
        if cursor is not None:
            at, after = _after(cursor)
            if at not in names:  # a cursor into a table the caller does not see was never given to it
                raise _foreign_cursor()
        if at is None:
            return [], None
        items: list[Listed] = []
        for table in names[names.index(at) :]:
            listed = self._documents(table)
            start = 0
            if after is not None and table == at:
                start = next((index for index, (source, _) in enumerate(listed) if source > after), len(listed))
            for source, title in listed[start:]:
                if len(items) == PAGE:
                    return items, _cursor(items[-1])
                items.append(Listed(uri(table, source), source, title, table))
        return items, None

    def _documents(self, table: str) -> list[tuple[str, str | None]]:
        handle = self.tools.tables.open(table)
        version = handle.version
        with self._lock:
            kept = self._catalogs.get(table)
            if kept is not None and kept[0] == version:
                return kept[1]
        table_layout = describe(handle.schema, self.tools.settings.text_column, table)
        listed = documents.catalog(handle, table_layout)
        with self._lock:
            self._catalogs[table] = (version, listed)
        return listed

    def read(self, address: str) -> str:
        """The document `address` names as Markdown, within lancedb_read's default budget, the line that names
        the resource reading on included (room for it is kept back; a source too long to repeat goes without)."""
        found = parse(address)
        base = uri(found.table, found.source)
        reserve = len(_reading_on(base, 10**9, 10**9))
        budget = DEFAULT_BUDGET - reserve if reserve <= DEFAULT_BUDGET // 4 else DEFAULT_BUDGET
        reading = self.tools.read(
            source=found.source, table=found.table, start=found.start, offset=found.offset, budget=budget
        )
        following = reading.reply.get("next")
        if following is None or budget == DEFAULT_BUDGET:
            return reading.text
        return reading.text + _reading_on(base, following["from"], following.get("offset", 0))


def _reading_on(base: str, start: int, offset: int) -> str:
    return f"\n_Or read the resource {base}?from={start}{f'&offset={offset}' if offset else ''}._\n"


def _cursor(last: Listed) -> str:
    return base64.urlsafe_b64encode(json.dumps({"table": last.table, "after": last.source}).encode()).decode()


def _after(cursor: str) -> tuple[str, str]:
    """The table and the last source of the page a cursor follows."""
    if len(cursor) > MAX_CURSOR:
        raise _foreign_cursor()
    try:
        value: Any = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error, RecursionError):  # deep nesting: RecursionError
        value = None
    if not isinstance(value, dict) or not all(isinstance(value.get(key), str) for key in ("table", "after")):
        raise _foreign_cursor()
    return str(value["table"]), str(value["after"])


def _foreign_cursor() -> InvalidRequest:
    return InvalidRequest("The cursor is not one this server gave; list again without a cursor.")
