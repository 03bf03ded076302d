"""A document's own metadata, as its reader found it, made safe to store on each of its rows and to filter by.

    Metadata.of({"tags": ["Python", 3], "date": "2024-05-01", "nested": {...}})
        -> Metadata(fields={"tags": ["Python", 3], "date": "2024-05-01"}, tags=("python", "3"), date="2024-05-01")
    metadata.columns() -> (meta JSON, tags, date)     # layout.META, layout.TAGS, layout.DATE

The readers give what the document says of itself: Markdown's front matter as written, HTML's `<meta>`, a
PDF's document information, a Word document's core properties (named alike: description, author, keywords,
date, created, modified). Kept: every value that is a scalar or a list of scalars, as JSON carries it (a date
as ISO text); left out: nested maps, nulls, binary, numbers JSON cannot hold, the title (a hit shows it). Text
is cut at MAX_TEXT characters, lists at MAX_ITEMS, a document at MAX_FIELDS fields and MAX_JSON characters in
all: every row of the document repeats them.

The tags are the values of `tags`, `keywords` and `categories` (and their singulars): a list's items, or a
text split at commas and semicolons, each normalised by `layout.tag_key`. The date is the first of `date`,
`published` and `created` that reads as one: an ISO date or date-time, a year or a year and month (their
first day), a PDF date (D:YYYYMMDD...) or an e-mail date; anything else leaves the document undated, never
fails it.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from lancelot_schema import layout

MAX_TEXT = 1000
MAX_ITEMS = 100
MAX_FIELDS = 50
MAX_KEY = 100
MAX_JSON = 8000
MAX_TAGS = 100
TAG_KEYS = ("tags", "tag", "keywords", "keyword", "categories", "category")
DATE_KEYS = ("date", "published", "created")
LEFT_OUT = frozenset({"title"})
# Integers beyond this lose precision in JavaScript clients' numbers: kept as text.
_SAFE_INTEGER = 2**53
_TAG_SPLIT = re.compile(r"[,;]")
_ISO = re.compile(r"(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?(?:[T ][0-9:.,]+\s*(?:Z|[+-][0-9:]+|[A-Z]{1,5})?)?")
_PDF = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:(Z)|([+-])(\d{2})'?(\d{2})?'?)?.*", re.DOTALL)


@dataclass(frozen=True)
class Metadata:
    """`fields`: what the document says of itself, JSON-ready; `tags`: normalised (`layout.tag_key`), distinct;
    `date`: YYYY-MM-DD, or None."""

    fields: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    date: str | None = None

    @classmethod
    def of(cls, raw: Mapping[Any, Any] | None) -> Metadata:
        """What a reader found, whatever its types: the unusable parts are left out, nothing raises."""
        fields = _fields(raw) if isinstance(raw, Mapping) else {}
        return cls(fields, _tags(fields), _date(fields))

    def columns(self) -> tuple[str | None, str | None, str | None]:
        """The values of layout.META, layout.TAGS and layout.DATE: null where there is nothing."""
        meta = json.dumps(self.fields, ensure_ascii=False) if self.fields else None
        tags = layout.TAG_SEPARATOR + "".join(tag + layout.TAG_SEPARATOR for tag in self.tags) if self.tags else None
        return meta, tags, self.date


def _fields(raw: Mapping[Any, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    size = 2
    for raw_key, raw_value in itertools.islice(raw.items(), MAX_FIELDS * 4):
        key = _key(raw_key)
        if key is None or key in fields or key.casefold() in LEFT_OUT:
            continue
        value = _value(raw_value)
        if value is None:
            continue
        added = len(json.dumps({key: value}, ensure_ascii=False))
        if size + added > MAX_JSON:
            continue  # a later, smaller field may still fit
        fields[key] = value
        size += added
        if len(fields) == MAX_FIELDS:
            break
    return fields


def _key(raw: Any) -> str | None:
    if isinstance(raw, str):
        key = " ".join(utf8(raw).split())
    elif isinstance(raw, bool | int | date):  # YAML reads `2024:` and `yes:` as keys that are not text
        key = str(raw)
    else:
        return None
    return key[:MAX_KEY] or None


def _scalar(value: Any) -> Any:
    """A scalar as JSON carries it, or None when it is none (a map, a list, a null, bytes...)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < _SAFE_INTEGER else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        text = utf8(value).strip()
        if len(text) > MAX_TEXT:
            text = text[: MAX_TEXT - 1].rstrip() + "…"
        return text or None
    if isinstance(value, datetime | date):
        return value.isoformat()
    return None


def utf8(text: str) -> str:
    """`text` without lone surrogates (YAML's "\\ud800"), which UTF-8, and so the table, cannot hold."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def _value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        items = [item for item in (_scalar(item) for item in value[: MAX_ITEMS * 4]) if item is not None]
        return items[:MAX_ITEMS] or None
    return _scalar(value)


def _tags(fields: Mapping[str, Any]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for key, value in fields.items():
        if key.casefold() not in TAG_KEYS:
            continue
        # A list holds tags as they are; one text may hold several (`tags: a, b`; a PDF's Keywords).
        parts = [str(item) for item in value] if isinstance(value, list) else _TAG_SPLIT.split(str(value))
        for part in parts:
            tag = layout.tag_key(part)
            if tag:
                found.setdefault(tag)
    return tuple(found)[:MAX_TAGS]


def _date(fields: Mapping[str, Any]) -> str | None:
    by_name = {key.casefold(): value for key, value in reversed(list(fields.items()))}
    for key in DATE_KEYS:
        value = by_name.get(key)
        found = date_of(value[0] if isinstance(value, list) and value else value)
        if found is not None:
            return found
    return None


def date_of(value: Any) -> str | None:
    """`value` as YYYY-MM-DD when it reads as a date (see the module's docstring), else None."""
    if isinstance(value, datetime | date):
        return _day(value.year, value.month, value.day)
    if isinstance(value, int) and not isinstance(value, bool):
        return _day(value, None, None)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if match := _ISO.fullmatch(text):
        year, month, day = match.groups()
        return _day(int(year), int(month) if month else None, int(day) if day else None)
    if match := _PDF.fullmatch(text):
        year, month, day = match.group(1, 2, 3)
        return _day(int(year), int(month) if month else None, int(day) if day else None)
    if any(char.isalpha() for char in text) and len(text) <= 64:
        from email.utils import parsedate_to_datetime  # imported by the few documents dated this way

        try:
            return parsedate_to_datetime(text).strftime("%Y-%m-%d")
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return None


def _day(year: int, month: int | None, day: int | None) -> str | None:
    """The date, its month's or its year's first day when only those are given; None when there is no such day."""
    try:
        return date(year, month or 1, day or 1).isoformat() if year >= 1000 else None
    except ValueError:
        return None


def pdf_timestamp(text: str | None) -> str | None:
    """A PDF date (`D:20240102103000+01'00'`) as ISO 8601 text (`2024-01-02T10:30:00+01:00`); None if it is none."""
    match = _PDF.fullmatch((text or "").strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, utc, sign, zone_hours, zone_minutes = match.groups()
    if _day(int(year), int(month or 1), int(day or 1)) is None:
        return None
    stamp = f"{year}-{month or '01'}-{day or '01'}"
    if hour is None:
        return stamp
    if not (int(hour) < 24 and int(minute or 0) < 60 and int(second or 0) < 60):
        return stamp
    stamp += f"T{hour}:{minute or '00'}:{second or '00'}"
    if utc:
        return stamp + "Z"
    if sign:
        return stamp + f"{sign}{zone_hours}:{zone_minutes or '00'}"
    return stamp
