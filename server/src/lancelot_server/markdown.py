"""The `lancedb_query` reply: one Markdown block that fits a character budget.

A header (mode, search type, query, any note), then one section per chunk in rank order. A chunk whose
section would take the block past the budget is left out whole, never cut, and the block ends by
saying how many were left out. The block never exceeds the budget.
"""

from __future__ import annotations

from lancelot_server.replies import SearchReply
from lancelot_server.rows import Hit

# The header shows at most this much of the query, note and table name: together with the closing line
# they stay under the smallest budget (500), so a 2,000-character query cannot crowd out the block.
QUERY_SHOWN = 100
NOTE_SHOWN = 150
TABLE_SHOWN = 60


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def header(reply: SearchReply) -> str:
    search: str = reply["searchType"]
    if "textMatch" in reply:
        search += f" ({reply['textMatch']})"
    lines = [
        f"# Search results from `{_one_line(reply['table'], TABLE_SHOWN)}`",
        "",
        f"- mode: {reply['mode']}",
        f"- search type: {search}",
        f"- query: {_one_line(reply['query'], QUERY_SHOWN)}",
    ]
    if "note" in reply:
        lines.append(f"- note: {_one_line(reply['note'], NOTE_SHOWN)}")
    return "\n".join(lines) + "\n"


def section(number: int, hit: Hit) -> str:
    title = hit["title"] or hit["source"] or hit["id"] or f"Result {number}"
    lines = [f"## {number}. {_one_line(title, 200)}", ""]
    if hit["source"]:
        lines.append(f"Source: {hit['source']}")
    if hit["heading"]:
        lines.append(f"Section: {_one_line(hit['heading'], 200)}")
    lines.append(f"Score: {hit['score']}")
    lines += ["", hit["text"].strip()]
    return "\n" + "\n".join(lines) + "\n"


def left_out(count: int, budget: int) -> str:
    chunks = "chunk" if count == 1 else "chunks"
    return f"\n_{count} more {chunks} left out to stay within the {budget:,}-character budget._\n"


def render(reply: SearchReply, budget: int) -> str:
    """The Markdown block for `reply`, at most `budget` characters long."""
    block = header(reply)
    if not reply["hits"]:
        return block + "\nNo passages matched.\n"
    omitted = 0
    # Room for the closing line is kept back, so it always fits (its length grows with the count's digits).
    reserve = len(left_out(len(reply["hits"]), budget))
    for number, hit in enumerate(reply["hits"], start=1):
        part = section(number, hit)
        if len(block) + len(part) + reserve <= budget:
            block += part
        else:
            omitted += 1
    if omitted:
        block += left_out(omitted, budget)
    return block
