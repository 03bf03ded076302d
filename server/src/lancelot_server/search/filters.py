"""Search filters by the documents' own metadata: tags, a date range and file types, as data.

    wanted = Filters.of(tags=["python"], tag_match="all", since="2024", until="2024-06", types=["md", "pdf"])
    wanted.require(table_layout, name)     # InvalidRequest when the table holds no document metadata
    wanted.condition()                     # a pyarrow expression over layout 5's columns, or None

A filter is a pyarrow expression whose values are literals in it, never SQL text: Lance runs it (through
Substrait) before it ranks, on BM25, vector and substring searches alike, so a reply holds `limit` hits
whenever that many passages match, however deep in the ranking they are. A tag matches when the document's
`tags` holds it between two separators (`match_substring`, a literal, not a pattern: `%` and `_` are
characters); both sides are normalised by `layout.tag_key`, and the tags' terms are joined as a balanced tree
(`balanced`: a chain one level deeper per tag cost twice the CPU per tag). Dates are ISO text, which sorts
as dates do; a document without a date matches no date filter. Several filters must all hold, and so must the
path prefix.
"""

from __future__ import annotations

import calendar
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lancelot_schema import layout
from lancelot_server.errors import InvalidRequest, shown
from lancelot_server.storage.store import Layout

TAG_MATCHES: tuple[str, ...] = ("any", "all")
# Tags a search takes: each is one more term of the condition Lance checks on every row it reads.
MAX_TAGS = 20
FEWER_TAGS = "keep the tags that matter most, and with tagMatch any search again for the others"
MAX_TYPES = 8
# What `types` accepts: the file types the indexer records (`layout.FILE_TYPES`' values).
FILE_TYPES: tuple[str, ...] = tuple(sorted(set(layout.FILE_TYPES.values())))
DATE_PATTERN = r"^\d{4}(-\d{2}(-\d{2})?)?$"
_DAY = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", re.ASCII)
DATE_FORMS = "YYYY-MM-DD, YYYY-MM or YYYY"


def date_problem(value: str) -> str | None:
    """Why `value` is not a date `since` and `until` take, or None."""
    match = _DAY.fullmatch(value)
    if match is None:
        return f"not a date: use {DATE_FORMS}"
    year, month, date = int(match[1]), int(match[2] or 1), int(match[3] or 1)
    if year < 1:
        return "there is no year 0"
    if not 1 <= month <= 12:
        return "there is no such month"
    if not 1 <= date <= calendar.monthrange(year, month)[1]:
        return "there is no such day"
    return None


def day(value: str, argument: str, *, last: bool = False) -> str:
    """`value` (YYYY-MM-DD, YYYY-MM or YYYY) as the day it starts on (or, `last`, ends on); InvalidRequest naming
    `argument` when it is no such date."""
    problem, match = date_problem(value), _DAY.fullmatch(value)
    if problem is not None or match is None:
        raise InvalidRequest(f"{argument} must be a date, {DATE_FORMS}: {problem} (got {shown(value, 40)}).")
    year, month = int(match[1]), int(match[2] or (12 if last else 1))
    number = int(match[3]) if match[3] else (calendar.monthrange(year, month)[1] if last else 1)
    return f"{year:04}-{month:02}-{number:02}"


def tag_keys(tags: Sequence[str]) -> tuple[str, ...]:
    """The tags as stored (`layout.tag_key`), distinct; InvalidRequest for one that holds nothing to match."""
    keys: list[str] = []
    for position, tag in enumerate(tags):
        key = layout.tag_key(tag)
        if not key:
            raise InvalidRequest(f"tags[{position}] holds nothing to match, only spaces or control characters.")
        if key not in keys:
            keys.append(key)
    return tuple(keys)


@dataclass(frozen=True)
class Filters:
    """`tags` (normalised) with `match_all` (every tag, not any); `since` and `until` as YYYY-MM-DD, both
    inclusive; `types` of file. Empty: no filter."""

    tags: tuple[str, ...] = ()
    match_all: bool = False
    since: str | None = None
    until: str | None = None
    types: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        tags: Sequence[str] | None = None,
        tag_match: str = "any",
        since: str | None = None,
        until: str | None = None,
        types: Sequence[str] | None = None,
    ) -> Filters:
        """The filters a search's arguments ask for, checked; InvalidRequest naming the argument that is wrong."""
        if tags is not None and not tags:
            raise InvalidRequest(f"tags must list 1 to {MAX_TAGS} tags; got 0.")
        if tags is not None and len(tags) > MAX_TAGS:
            raise InvalidRequest(f"tags lists {len(tags)} tags; a search takes at most {MAX_TAGS} tags: {FEWER_TAGS}.")
        if tag_match not in TAG_MATCHES:
            raise InvalidRequest(f"tagMatch must be one of {', '.join(TAG_MATCHES)}; got {shown(tag_match, 40)}.")
        if types is not None and not 1 <= len(types) <= MAX_TYPES:
            raise InvalidRequest(f"types must list 1 to {MAX_TYPES} file types; got {len(types)}.")
        for kind in types or ():
            if kind not in FILE_TYPES:
                raise InvalidRequest(f"Unknown file type {shown(kind, 40)} in types; use {', '.join(FILE_TYPES)}.")
        first = day(since, "since") if since is not None else None
        last = day(until, "until", last=True) if until is not None else None
        if first is not None and last is not None and first > last:
            raise InvalidRequest(f"since ({since}) is after until ({until}): no date is in between.")
        return cls(tag_keys(tags or ()), tag_match == "all", first, last, tuple(dict.fromkeys(types or ())))

    def __bool__(self) -> bool:
        return bool(self.tags or self.since or self.until or self.types)

    def require(self, table_layout: Layout, table: str) -> None:
        """Refuse to filter a table that holds no document metadata (layouts 1 to 4, other tools' tables):
        filtering it by a column it lacks would either fail in Lance or silently match nothing."""
        if self and not set(layout.FILTER_COLUMNS).issubset(table_layout.columns):
            raise InvalidRequest(
                f"Table {shown(table)} holds no document metadata to filter by (tags, since, until, types): it was "
                "indexed before Lancelot recorded it, or by another tool. Rebuild it with lancelot-index, or search "
                "it without these arguments."
            )

    def condition(self) -> Any:
        """The filters as one pyarrow expression (None when there are none); its values are literals."""
        import pyarrow.compute as pc

        parts: list[Any] = []
        if self.tags:
            held = [
                pc.match_substring(pc.field(layout.TAGS), layout.TAG_SEPARATOR + tag + layout.TAG_SEPARATOR)
                for tag in self.tags
            ]
            parts.append(balanced(held, operator.and_ if self.match_all else operator.or_))
        if self.since is not None:
            parts.append(pc.field(layout.DATE) >= pc.scalar(self.since))
        if self.until is not None:
            parts.append(pc.field(layout.DATE) <= pc.scalar(self.until))
        if self.types:
            parts.append(pc.field(layout.FILE_TYPE).isin(list(self.types)))
        # A null (no tags, no date) is no match: a filter keeps only rows where it is true, and no part is negated.
        return balanced(parts, operator.and_) if parts else None


NONE_KEPT = "no document of the table has the tags, date or file type asked for"


def any_kept(table: Any, condition: Any) -> bool:
    """Whether any row of `table` satisfies `condition` (a read of the metadata columns until the first one does)."""
    return bool(table.search().where(condition).select([layout.ID]).limit(1).to_arrow().num_rows)


def balanced(terms: list[Any], join: Callable[[Any, Any], Any]) -> Any:
    """`terms` (pyarrow expressions) joined pairwise, level by level: a tree as shallow as it can be. Both pyarrow's
    Substrait encoding and Lance take time that doubles with each level of a chain joined one term after another
    (the substring lookup's words, the tag filter's tags: docs/decisions.md, "Search cost")."""
    while len(terms) > 1:
        terms = [join(*terms[at : at + 2]) if at + 1 < len(terms) else terms[at] for at in range(0, len(terms), 2)]
    return terms[0]
