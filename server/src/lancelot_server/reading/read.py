"""Reading on from a hit: a passage and its neighbours, or a document from a passage on, within a budget.

    around(document, number, before, after, budget) -> Reading     (lancedb_read with `id`)
    onward(document, start, offset, budget) -> Reading             (with `source`, and resources)

A reading is Markdown for the assistant, never longer than `budget` characters, and the same passages as
structured content. Passages are shown whole; only when the first one does not fit is it cut at a word,
with a visible mark, and the reply names the arguments that go on from the cut (`from`, `offset`). So a
document walked with the continuation arguments yields every character of every passage exactly once,
whatever the budget: pieces of a cut passage join back into its text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, cast

from typing_extensions import TypedDict

from lancelot_schema import links
from lancelot_server.errors import InvalidRequest, TableChanged, shown, shown_number
from lancelot_server.reading.documents import NUMBER, Document, Order
from lancelot_server.reading.markdown import one_line
from lancelot_server.search.rows import Locators, locators, split_header

# A reply's Markdown in characters (`budget`), lancedb_read's and lancedb_query's: the default leaves room in an
# assistant's context, the least still holds a passage.
MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET = 500, 100_000, 12_000
MAX_AROUND = 20
DEFAULT_BEFORE, DEFAULT_AFTER = 1, 2
FETCH = 40  # passages fetched at a time when reading onward
TITLE_SHOWN = 200
HEADING_SHOWN = 200
MIN_ROOM = 100  # characters of text the budget must leave once the header and closing line are counted
CUT_MARK = " […]"

End = Literal["document", "budget", "window"]
ReadArguments = TypedDict(
    "ReadArguments", {"source": str, "table": NotRequired[str], "from": int, "offset": NotRequired[int]}
)


class ReadPassage(Locators):
    """One passage, or the piece of one that a budget allowed (`offset` into it, `cut` when it goes on)."""

    number: int
    id: str | None
    heading: str | None
    text: str
    offset: NotRequired[int]
    cut: NotRequired[bool]


class ReadReply(TypedDict):
    table: str
    source: str
    title: str | None
    url: NotRequired[str]
    total: int
    order: Order
    passages: list[ReadPassage]
    end: End
    next: NotRequired[ReadArguments]
    note: NotRequired[str]


@dataclass(frozen=True)
class Reading:
    reply: ReadReply
    text: str


@dataclass
class _Shown:
    number: int
    row: dict[str, Any]
    text: str  # the part of the passage's text shown
    offset: int
    cut: bool
    section: str


class _Page:
    """The reply being filled: the header, the sections in document order, the budget left."""

    def __init__(
        self, document: Document, table_argument: str | None, budget: int, first_row: dict[str, Any], *, around: bool
    ) -> None:
        self.document = document
        self.around = around  # a read around an id, whose closing line may name passages left out before it
        self.table_argument = table_argument
        self.budget = budget
        layout = document.table_layout
        title = str(first_row.get(layout.title) or "").strip() if layout.title else ""
        self.title = title or None
        template = layout.link_template
        self.url = links.link(template, document.source) if template else None
        self.header = self._header()
        self.used = len(self.header) + len(self._worst_closing())
        if self.used + MIN_ROOM > budget:
            raise InvalidRequest(
                f"budget={budget:,} is too small for {shown(document.source)}: its name, link and closing line take "
                f"{self.used:,} characters. Pass a budget of at least {self.used + MIN_ROOM:,}."
            )

    def _header(self) -> str:
        document = self.document
        title = self.title or document.source
        count = f"{document.total:,} passage" + ("" if document.total == 1 else "s, numbered from 0")
        lines = [
            f"# {one_line(title, TITLE_SHOWN)}",
            "",
            f"Source: {document.source} · {count} · table `{document.table}`",
        ]
        if self.url:
            lines.append(f"Link: {self.url}")
        if document.order == "table":
            lines.append("Order: this table has no passage numbers; passages are numbered in table order.")
        return "\n".join(lines) + "\n"

    def arguments(self, start: int, offset: int = 0) -> ReadArguments:
        found = ReadArguments({"source": self.document.source, "from": start})
        if self.table_argument is not None:
            found["table"] = self.table_argument
        if offset:
            found["offset"] = offset
        return found

    def closing(self, first: int, last: int, end: End, next_at: ReadArguments | None, left_before: int | None) -> str:
        span = f"Passage {first}" if first == last else f"Passages {first}–{last}"
        line = f"{span} of {self.document.total:,}"
        if end == "document":
            line += ": the end of the document."
        else:
            line += "; the budget ended the reply." if end == "budget" else "."
            if next_at is not None:
                line += f" Continue with {json.dumps(next_at, ensure_ascii=False)}."
        if left_before is not None:
            before = json.dumps(self.arguments(left_before), ensure_ascii=False)
            line += f" Passages before {first} were left out for the budget; read them with {before}."
        return f"\n_{line}_\n"

    def _worst_closing(self) -> str:
        big = self.document.total
        return self.closing(big, big + 1, "budget", self.arguments(big, 10**9), big if self.around else None)

    def section(self, number: int, row: dict[str, Any], text: str, *, compact: bool = False, cut: bool = False) -> str:
        """A passage's section; `compact` leaves out its heading and locators (the structured reply has them)."""
        layout = self.document.table_layout
        heading = str(row.get(layout.heading) or "").strip() if layout.heading else ""
        title = f"## Passage {number}"
        if compact:
            return f"\n{title}{' (cut)' if cut else ''}\n\n{text}{CUT_MARK if cut else ''}\n"
        if heading:
            title += f" · {one_line(heading, HEADING_SHOWN)}"
        found = locators(row, layout, self.document.source)
        where = [f"lines {found['lines'][0]}–{found['lines'][1]}"] if "lines" in found else []
        where += [f"#{found['anchor']}"] if "anchor" in found else []
        where += [f"page {found['page']}"] if "page" in found else []
        where += [found["url"]] if "url" in found else []
        located = f"\n{' · '.join(where)}" if where else ""
        return f"\n{title}{located}\n\n{text}\n"

    def fit(self, number: int, row: dict[str, Any], offset: int, *, first: bool) -> _Shown | None:
        """The passage (from `offset`) as a section if it fits whole, or cut to fit when it is the first."""
        text = _text(row, self.document)
        if offset >= max(len(text), 1):
            raise InvalidRequest(
                f"{_argument('offset', offset)} is past the end of passage {number} ({len(text):,} characters)."
            )
        rest = text[offset:]
        section = self.section(number, row, rest)
        if self.used + len(section) <= self.budget:
            return _Shown(number, row, rest, offset, False, section)
        if not first:
            return None
        room = self.budget - self.used - len(self.section(number, row, "", compact=True, cut=True))
        piece = rest[: _cut(rest, room)]
        cut = len(piece) < len(rest)
        return _Shown(number, row, piece, offset, cut, self.section(number, row, piece, compact=True, cut=cut))

    def count(self, shown: _Shown) -> None:
        self.used += len(shown.section)

    def reading(self, shown: list[_Shown], end: End, next_at: ReadArguments | None, left_before: int | None) -> Reading:
        shown.sort(key=lambda item: item.number)
        document = self.document
        text = self.header + "".join(item.section for item in shown)
        text += self.closing(shown[0].number, shown[-1].number, end, next_at, left_before)
        reply = ReadReply(
            table=document.table,
            source=document.source,
            title=self.title,
            total=document.total,
            order=document.order,
            passages=[self._passage(item) for item in shown],
            end=end,
        )
        if self.url:
            reply["url"] = self.url
        if next_at is not None:
            reply["next"] = next_at
        if document.order == "table":
            reply["note"] = "This table has no passage numbers; passages are numbered in table order."
        return Reading(reply, text)

    def _passage(self, item: _Shown) -> ReadPassage:
        layout = self.document.table_layout
        passage = ReadPassage(
            number=item.number,
            id=_value(item.row, layout.id),
            heading=_value(item.row, layout.heading),
            text=item.text,
        )
        if item.offset:
            passage["offset"] = item.offset
        if item.cut:
            passage["cut"] = True
        found = locators(item.row, layout, self.document.source)
        found.pop("passage", None)  # the same as `number`
        return cast(ReadPassage, {**passage, **found})


def around(
    document: Document, number: int, before: int, after: int, budget: int, table_argument: str | None = None
) -> Reading:
    """Passage `number` and up to `before` / `after` passages around it, nearest first while they fit."""
    rows = {row[NUMBER]: row for row in document.passages(number - before, number + after)}
    wanted_low, wanted_high = max(number - before, 0), min(number + after, document.total - 1)
    if sorted(rows) != list(range(wanted_low, wanted_high + 1)):
        raise _changed(document)
    page = _Page(document, table_argument, budget, rows[number], around=True)
    target = page.fit(number, rows[number], 0, first=True)
    assert target is not None
    page.count(target)
    shown = [target]
    low = high = number
    # One passage after, one before, and so on: the nearest neighbours first. A side stops at the first
    # passage that does not fit (the reply stays one run of passages); the other side may go on.
    sides = set() if target.cut else {1, -1}
    while sides:
        for direction in (1, -1):
            if direction not in sides:
                continue
            candidate = high + 1 if direction == 1 else low - 1
            fitted = None
            if wanted_low <= candidate <= wanted_high:
                fitted = page.fit(candidate, rows[candidate], 0, first=False)
            if fitted is None:
                sides.discard(direction)
                continue
            page.count(fitted)
            shown.append(fitted)
            low, high = min(low, candidate), max(high, candidate)
    short = target.cut or low > wanted_low or high < wanted_high
    end: End = "budget" if short else ("document" if high == document.total - 1 else "window")
    if target.cut:
        next_at: ReadArguments | None = page.arguments(number, len(target.text))
    else:
        next_at = page.arguments(high + 1) if high < document.total - 1 else None
    left_before = wanted_low if low > wanted_low else None
    return page.reading(shown, end, next_at, left_before)


def onward(document: Document, start: int, offset: int, budget: int, table_argument: str | None = None) -> Reading:
    """The document from passage `start` (and `offset` characters into it) on, as far as the budget goes."""
    if start >= document.total:
        last = document.total - 1
        raise InvalidRequest(
            f"{_argument('from', start)} is past the end of {shown(document.source)}, whose passages are numbered "
            f"0 to {last:,}."
        )
    page: _Page | None = None
    kept: list[_Shown] = []
    at = start
    while at < document.total:
        rows = document.passages(at, at + FETCH - 1)
        if [row[NUMBER] for row in rows] != list(range(at, min(at + FETCH, document.total))):
            raise _changed(document)
        for row in rows:
            page = page or _Page(document, table_argument, budget, row, around=False)
            fitted = page.fit(at, row, offset if at == start else 0, first=not kept)
            if fitted is None:
                return page.reading(kept, "budget", page.arguments(at), None)
            page.count(fitted)
            kept.append(fitted)
            if fitted.cut:
                return page.reading(kept, "budget", page.arguments(at, fitted.offset + len(fitted.text)), None)
            at += 1
    assert page is not None
    return page.reading(kept, "document", None, None)


def _changed(document: Document) -> TableChanged:
    # The passage count and the passages come from two lookups; a rebuild in between can make them disagree.
    return TableChanged(
        f"Table {shown(document.table)} was rebuilt while {shown(document.source)} was being read; read it again."
    )


def _argument(name: str, value: int) -> str:
    """`name=value` for a message, or the number's length when it is long (1e308 has 309 digits)."""
    written = shown_number(value)
    return f"{name}={written}" if written[0].isdigit() else f"{name} ({written})"


def _text(row: dict[str, Any], document: Document) -> str:
    return split_header(str(row.get(document.table_layout.text) or ""))[0]


def _value(row: dict[str, Any], column: str | None) -> str | None:
    if column is None:
        return None
    value = row.get(column)
    return str(value).strip() or None if value is not None else None


def _cut(text: str, room: int) -> int:
    """Where to cut `text` to fit `room` characters: after the last whitespace that fits, else at `room`."""
    room = max(room, 1)
    if len(text) <= room:
        return len(text)
    space = max(text.rfind(" ", 0, room), text.rfind("\n", 0, room))
    return space + 1 if space > 0 else room


def check_arguments(
    id: str | None, source: str | None, before: int | None, after: int | None, start: int | None, offset: int | None
) -> None:
    """Refuse a combination of lancedb_read's arguments that asks for two things at once, naming them."""
    if (id is None) == (source is None):
        both = "not both" if id is not None else "one of them"
        raise InvalidRequest(
            f"Pass id (a hit's id: that passage and its neighbours) or source (a document, from its start), {both}."
        )
    if id is not None and (start is not None or offset is not None):
        raise InvalidRequest("from and offset continue a document read by source; with id, use before and after.")
    if source is not None and (before is not None or after is not None):
        raise InvalidRequest("before and after count passages around an id; with source, use from (and offset).")
    for name, value in (("before", before), ("after", after)):
        if value is not None and not 0 <= value <= MAX_AROUND:
            raise InvalidRequest(f"{name} must be between 0 and {MAX_AROUND} passages; got {shown_number(value)}.")
    for name, value in (("from", start), ("offset", offset)):
        if value is not None and value < 0:
            raise InvalidRequest(f"{name} must be 0 or more; got {shown_number(value)}.")
    if offset and start is None:
        raise InvalidRequest("offset counts characters into the passage `from` names; pass from too.")
