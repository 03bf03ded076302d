"""The substring match's n-gram lookup, its variants side by side in one process, alternating round by round.

    .venv/bin/python -m bench.lookup [--db DB] [--rounds N] VARIANT [VARIANT ...]

VARIANT: `current`, or settings joined by `+`: `chained` (the lookup's terms joined one after another, as before
`66a1cc8`, instead of pairwise), `trigrams=N` (`substring.LOOKUP_TRIGRAMS`), `batch=N`
(`substring.LOOKUP_BATCH_ROWS`); e.g. `chained+trigrams=99+batch=8192` is the lookup before issue 18's mends.
DB defaults to the 100,000-passage tables `scripts/bench-search` builds; the table is `bench` (the n-gram index).
Queries: bench-search's worst cases that the lookup serves (not those without three letters or digits in a row,
which are scanned), and two more. Each `Tools.search` in text mode; medians in ms, and whether every variant
gave the same hits.
"""

from __future__ import annotations

import argparse
import functools
import time
from typing import Any

from bench import common
from bench.search_table import location
from bench.search_worst import worst_cases
from lancelot_server.search import substring

BALANCED = substring._balanced
DEFAULTS = (substring.LOOKUP_TRIGRAMS, substring.LOOKUP_BATCH_ROWS)


def chained(terms: list[Any], join: Any) -> Any:
    return functools.reduce(join, terms)


def apply(variant: str) -> None:
    """Set the module as `variant` says (every setting it does not name as the code has it)."""
    substring._balanced = BALANCED
    substring.LOOKUP_TRIGRAMS, substring.LOOKUP_BATCH_ROWS = DEFAULTS
    for part in variant.split("+"):
        name, _, value = part.partition("=")
        if name == "chained":
            substring._balanced = chained
        elif name == "trigrams":
            substring.LOOKUP_TRIGRAMS = int(value)
        elif name == "batch":
            substring.LOOKUP_BATCH_ROWS = int(value)
        elif name != "current":
            raise SystemExit(f"unknown variant part {part!r}")


def main() -> None:
    from lancelot_schema import logs

    parser = argparse.ArgumentParser(
        prog="python -m bench.lookup", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default=str(location(100_000)))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("variants", nargs="+")
    args = parser.parse_args()
    logs.configure("WARNING")
    tools = common.in_process_tools({"LANCEDB_PATH": args.db, "LANCEDB_TABLE": "bench"})
    cases = {name: case for name, case in worst_cases().items() if "punctuation" not in name and "CJK" not in name}
    cases["an identifier in some passages"] = {"query": "pg_stat_activity xid"}
    cases["two fragments, each in thousands of passages"] = {"query": "onnect ormaliz"}
    times: dict[tuple[str, str], list[float]] = {(case, variant): [] for case in cases for variant in args.variants}
    replies: dict[str, set[tuple[str, ...]]] = {case: set() for case in cases}
    for _ in range(args.rounds):
        for variant in args.variants:
            apply(variant)
            for case, arguments in cases.items():
                started = time.perf_counter()
                reply = tools.search(mode="text", **arguments)
                times[case, variant].append(time.perf_counter() - started)
                replies[case].add(tuple(hit["id"] for hit in reply["hits"]))
    print(common.table_head(["query", *(f"`{variant}`" for variant in args.variants), "same hits"]))
    for case in cases:
        medians = [f"{common.median_ms(times[case, v]):.0f} ms" for v in args.variants]
        print(common.table_row([case, *medians, "yes" if len(replies[case]) == 1 else "NO"]))


if __name__ == "__main__":
    main()
