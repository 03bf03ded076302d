"""The `lancedb_query` reply: one Markdown block that fits a character budget.

A header (mode, search type, query, the filters that narrowed the search, any note), then one section per
passage in rank order, each with its source (line range, anchor or page), id and score (and its table, when
several were searched; the positions of the phrasings that found it, when `queries` gave several), and its
title linked when the table has a link template. A passage whose section would take the block past the
budget is left out whole, and the block ends by saying how many were left out; only the first passage, when
even it does not fit, is shown cut at a word, with a mark naming the `lancedb_read` id that reads it whole.
The block never exceeds the budget. Control characters
of the query and of what a table holds are written as escapes (`printable`), never raw.
"""

from __future__ import annotations

import json
import re

from lancelot_server.replies import SearchHit, SearchReply, TableSearch
from lancelot_server.search.filters import Filters

# The header shows at most this much of the query, note and table name (or several tables' search types):
# together with the closing line they stay under the smallest budget (500), so a 2,000-character query or
# eight long table names cannot crowd out the block.
QUERY_SHOWN = 100
NOTE_SHOWN = 150
TABLE_SHOWN = 60
# The filters' line shows at most this much of the tags and of the path; at the smallest budgets, with the longest
# query and note, the line as a whole is cut to the room left (`render`).
TAGS_SHOWN = 80
PATH_SHOWN = 60


# Control characters (C0, DEL, C1) and the bidirectional overrides and isolates: raw in Markdown, an ESC
# recolours or clears a terminal that shows it, a NUL cuts a C string, an override reverses what follows.
# A passage's text keeps its tabs and line breaks.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNPRINTABLE_IN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, *, lines: bool = False) -> str:
    """`text` with each control character written as Python escapes it (`\\x1b`, `\\u202e`); with `lines`, its
    line breaks and tabs kept."""
    return (_UNPRINTABLE_IN_TEXT if lines else _UNPRINTABLE).sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    return repr(match[0])[1:-1]


def one_line(text: str, limit: int) -> str:
    """`text` on one line (runs of white space one space) and `printable`, cut to `limit` characters with `…`."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _search_type(searched: SearchReply | TableSearch) -> str:
    search: str = searched["searchType"]
    return search + f" ({searched['textMatch']})" if "textMatch" in searched else search


def narrowed(filters: Filters | None, path: str | None) -> str | None:
    """The header's line of the filters a search asked for, by their argument names (None when none): tags as the
    search matched them (normalised), dates as the days they start and end on. Values are JSON, so a comma or a
    quote in one cannot pass for two."""
    parts = []
    if filters and filters.tags:
        tags = one_line(json.dumps(list(filters.tags), ensure_ascii=False), TAGS_SHOWN)
        parts.append(f"tags {tags} (tagMatch {'all' if filters.match_all else 'any'})")
    if filters and filters.since:
        parts.append(f"since {filters.since}")
    if filters and filters.until:
        parts.append(f"until {filters.until}")
    if filters and filters.types:
        parts.append(f"types {json.dumps(list(filters.types))}")
    if path:
        parts.append(f"path {one_line(json.dumps(path, ensure_ascii=False), PATH_SHOWN)}")
    return " · ".join(parts) or None


def header(reply: SearchReply, filters: str | None = None) -> str:
    if "tables" in reply:
        searches = ", ".join(f"`{one['table']}` {_search_type(one)}" for one in reply["tables"])
        title = f"# Search results from {len(reply['tables'])} tables, in rank order"
        search = f"- search types: {one_line(searches, TABLE_SHOWN + 10)}"
    else:
        title = f"# Search results from `{one_line(reply.get('table', ''), TABLE_SHOWN)}`"
        search = f"- search type: {_search_type(reply)}"
    if "queries" in reply:
        asked = "; ".join(f"[{position}] {phrasing}" for position, phrasing in enumerate(reply["queries"]))
        query = f"- queries: {one_line(asked, QUERY_SHOWN)}"
    else:
        query = f"- query: {one_line(reply.get('query', ''), QUERY_SHOWN)}"
    lines = [title, "", f"- mode: {reply['mode']}", search, query]
    if filters:
        lines.append(f"- filters: {filters}")
    if "note" in reply:
        lines.append(f"- note: {one_line(reply['note'], NOTE_SHOWN)}")
    return "\n".join(lines) + "\n"


# At least this much of the first passage's text must fit for it to be shown cut rather than left out.
MIN_CUT = 80


def _title(number: int, hit: SearchHit) -> str:
    title = one_line(hit["title"] or hit["source"] or hit["id"] or f"Result {number}", 200)
    if "url" not in hit:
        return title
    # Brackets would end the link text early; a URL holds no spaces or parentheses unencoded by then.
    label = title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({hit['url'].replace('(', '%28').replace(')', '%29')})"


def _where(hit: SearchHit) -> str:
    where = hit["source"] or ""
    if "lines" in hit:
        first, last = hit["lines"]
        where += f", line {first}" if first == last else f", lines {first}–{last}"
    elif "anchor" in hit:
        where += f"#{hit['anchor']}"
    if "page" in hit:
        where += f", page {hit['page']}"
    return where


def section(number: int, hit: SearchHit, text: str | None = None, *, cut: bool = False, table: bool = False) -> str:
    """The passage's section; `text` (a cut piece) in place of its text, with the mark when `cut`; its table's name
    when `table` (several tables searched)."""
    lines = [f"## {number}. {_title(number, hit)}", ""]
    if table:
        lines.append(f"Table: `{one_line(hit['table'], TABLE_SHOWN)}`")
    if hit["source"]:
        lines.append(f"Source: {printable(_where(hit))}")
    if hit["heading"]:
        lines.append(f"Section: {one_line(hit['heading'], 200)}")
    if hit["id"]:
        lines.append(f"Id: {printable(hit['id'])}")
    lines.append(f"Score: {hit['score']}")
    if "queries" in hit:
        lines.append(f"Found by queries: {', '.join(map(str, hit['queries']))}")
    lines += ["", (_text(hit) if text is None else text) + (_cut_mark(hit) if cut else "")]
    return "\n" + "\n".join(lines) + "\n"


def _text(hit: SearchHit) -> str:
    return printable(hit["text"].strip(), lines=True)


def _cut_mark(hit: SearchHit) -> str:
    if not hit["id"]:
        return " […] (cut to fit)"
    return f" […] (cut to fit; lancedb_read with id {printable(hit['id'])} reads it whole)"


def _cut_section(number: int, hit: SearchHit, room: int, table: bool) -> str | None:
    """The section with its text cut at a word to fit `room` characters, or None when too little would show."""
    text = _text(hit)
    space = room - len(section(number, hit, "", cut=True, table=table))
    if space < MIN_CUT:
        return None
    end = max(text.rfind(" ", 0, space), text.rfind("\n", 0, space))
    piece = text[: end if end > 0 else space].rstrip()
    return section(number, hit, piece, cut=True, table=table)


NO_MATCH = "\nNo passages matched.\n"


def left_out(count: int, budget: int) -> str:
    passages = "passage" if count == 1 else "passages"
    return f"\n_{count} more {passages} left out to stay within the {budget:,}-character budget._\n"


def render(reply: SearchReply, budget: int, filters: Filters | None = None, path: str | None = None) -> str:
    """The Markdown block for `reply`, at most `budget` characters long; its header names the `filters` and `path`
    prefix the search was narrowed by."""
    # Room for the closing line is kept back, so it always fits (its length grows with the count's digits).
    reserve = len(left_out(len(reply["hits"]), budget)) if reply["hits"] else len(NO_MATCH)
    block = header(reply)
    line = narrowed(filters, path)
    if line:
        room = budget - reserve - len(header(reply, "…"))
        block = header(reply, line if len(line) <= room else line[: max(room, 1) - 1] + "…")
    if not reply["hits"]:
        return block + NO_MATCH
    omitted = 0
    shown = 0
    several = "tables" in reply
    for number, hit in enumerate(reply["hits"], start=1):
        part: str | None = section(number, hit, table=several)
        if len(block) + len(part or "") + reserve > budget:
            part = _cut_section(number, hit, budget - len(block) - reserve, several) if not shown else None
        if part is None:
            omitted += 1
        else:
            block += part
            shown += 1
    if omitted:
        block += left_out(omitted, budget)
    return block
