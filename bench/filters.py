"""Measure the metadata filters of lancedb_search (tags, dates, file types) against the same searches unfiltered.

The table: bench-search's 100,000 passages (Debian's Python 3.11 and PostgreSQL 15 manuals, bench/search_table.py,
built first when missing), given layout 5's metadata columns per document (a tag `python` or `postgres` by its
manual, `rare` on one document in a hundred, a date spread over ten years) and 64-wide vectors (random: vector
search costs the same whatever they hold), written by the indexer's own writer with its indexes. Built once under
bench-work/filters.

Each search runs through the server's Tools in this process, round by round: unfiltered (the reference), then
with a broad filter (half the documents), a date range (a tenth) and a rare tag (a hundredth), each as it is
built (a pyarrow expression Lance runs before it ranks), and, for BM25, as the alternative it replaced: the
unfiltered ranking fetched four times deeper each round and filtered in Arrow until `limit` rows pass, both
fetching ids only (against the same fetch unfiltered). Reported as medians and as ratios to the unfiltered
search of the same kind.

Then the cost of a number of tags (1, 5, 10, 20 and the most a search takes, MAX_TAGS): `rare` and tags no
document has, any of them and all of them, against the same searches with no filter, in CPU and wall time; and,
once per count, the condition as it was built before issue 29 (one chain of ORs, a level deeper per tag), whose
cost doubled with each tag. `--tags-only` measures that part alone.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from bench import common, search_table
from bench.common import PYTHON_AND_POSTGRES_QUERIES

WORK = common.WORK / "filters"
WIDTH = 64


def _digest(path: str) -> int:
    return int.from_bytes(hashlib.sha256(path.encode()).digest()[:8], "big")


def build(db: Path) -> None:
    """The bench table with metadata and vectors, unless it is there already."""
    import lance
    import numpy as np
    import pyarrow as pa

    from lancelot_indexer.writing import write
    from lancelot_schema import layout

    if (db / "documents.lance").exists():
        return
    table = lance.dataset(str(search_table.build(100_000) / "bench.lance")).to_table()
    paths = table.column(layout.PATH).to_pylist()
    tags, dates = [], []
    for path in paths:
        digest = _digest(path)
        labels = ["python" if "/python/" in path else "postgres", *(["rare"] if digest % 100 == 0 else [])]
        tags.append(layout.TAG_SEPARATOR + "".join(label + layout.TAG_SEPARATOR for label in labels))
        dates.append((date(2015, 1, 1) + timedelta(days=digest % 3650)).isoformat())
    rows = len(paths)
    vectors = np.random.default_rng(7).standard_normal((rows, WIDTH), dtype=np.float32)
    # The metadata set here replaces the indexer's (none for HTML); a table of an older layout lacks the columns.
    columns = {
        layout.TAGS: pa.array(tags, pa.string()),
        layout.DATE: pa.array(dates, pa.string()),
        layout.FILE_TYPE: pa.array(["html"] * rows, pa.string()),
    }
    for name, kind in ((layout.PAGE, pa.int32()), (layout.FILE_HASH, pa.string()), (layout.META, pa.string())):
        if name not in table.schema.names:
            columns[name] = pa.nulls(rows, kind)
    for name, values in columns.items():
        if name in table.schema.names:
            table = table.set_column(table.schema.get_field_index(name), name, values)
        else:
            table = table.append_column(name, values)
    table = table.select(list(layout.INDEXER_COLUMNS)).append_column(
        layout.VECTOR, pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), WIDTH)
    )
    stamp = {
        layout.META_LAYOUT_VERSION: layout.LAYOUT_VERSION,
        layout.META_EMBEDDING_MODEL: "bench-random",
        layout.META_VECTOR_WIDTH: str(WIDTH),
    }
    db.mkdir(parents=True, exist_ok=True)
    write.replace_table(db, "documents", table, stamp, keep_versions=timedelta(0))


def _bm25(tools: Any, query: str) -> Any:
    from lance.query import MatchQuery

    searched = tools.store.table("documents").search(MatchQuery(query, "text"), query_type="fts")
    return searched.select(["id", "tags", "date", "_score"])


def _pre_filtered(tools: Any, query: str, condition: Any, limit: int) -> int:
    """BM25 ids as the server fetches them: the filter (if any) run by Lance before it ranks."""
    searched = _bm25(tools, query)
    return int((searched if condition is None else searched.where(condition)).limit(limit).to_arrow().num_rows)


def _post_filtered(tools: Any, query: str, condition: Any, limit: int) -> int:
    """The alternative: BM25 unfiltered, four times deeper each round, filtered in Arrow until `limit` rows pass."""
    want = max(limit * 4, 50)
    while True:
        fetched = _bm25(tools, query).limit(want).to_arrow()
        kept = fetched.filter(condition)
        if kept.num_rows >= limit or fetched.num_rows < want:
            return min(kept.num_rows, limit)
        want *= 4


def _chained(tags: list[str]) -> Any:
    """The tag condition as it was built before issue 29: one left-deep chain of ORs."""
    import functools
    import operator

    import pyarrow.compute as pc

    from lancelot_schema import layout

    separator = layout.TAG_SEPARATOR
    held = [pc.match_substring(pc.field(layout.TAGS), separator + layout.tag_key(tag) + separator) for tag in tags]
    return functools.reduce(operator.or_, held)


def _cpu_and_wall(run: Any) -> tuple[float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    run()
    return time.process_time() - cpu, time.perf_counter() - started


def tag_counts(tools: Any, rounds: int, limit: int) -> None:
    """Searches with 1 to MAX_TAGS tags (`rare`, then tags no document has) against the same searches unfiltered."""
    from lancelot_server.search.filters import MAX_TAGS, Filters

    counts = sorted({1, 5, 10, 20, MAX_TAGS})
    tags = {count: ["rare", *(f"absent {number}" for number in range(count - 1))] for count in counts}
    runs: dict[tuple[str, str], Any] = {}
    for mode in ("text", "vector"):
        runs[mode, "none"] = Filters()
        for count in counts:
            runs[mode, f"{count} tag{'' if count == 1 else 's'}, any"] = Filters.of(tags=tags[count])
        runs[mode, f"{MAX_TAGS} tags, all (none has them all)"] = Filters.of(tags=tags[MAX_TAGS], tag_match="all")
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in runs}
    loads = []
    for _ in range(rounds):
        loads.append(common.load_average())
        for query in PYTHON_AND_POSTGRES_QUERIES:
            for (mode, name), chosen in runs.items():
                search = lambda: tools.search(query, mode=mode, limit=limit, filters=chosen)  # noqa: B023, E731
                samples[mode, name].append(_cpu_and_wall(search))
    reference = {mode: statistics.median(wall for _, wall in samples[mode, "none"]) for mode in ("text", "vector")}
    label = f"{rounds} rounds of {len(PYTHON_AND_POSTGRES_QUERIES)} queries, load {min(loads)}–{max(loads)}"
    print(f"\nTags ({label}):\n")
    print(common.table_head(["search", "tags", "median ms", "median CPU ms", "× unfiltered"]))
    for (mode, name), taken in samples.items():
        wall = statistics.median(spent for _, spent in taken)
        cpu = statistics.median(spent for spent, _ in taken)
        print(
            common.table_row([mode, name, f"{wall * 1000:.1f}", f"{cpu * 1000:.1f}", f"{wall / reference[mode]:.2f}"])
        )
    # The old chain once per count (seconds each at 20 tags): BM25 ids as the server fetched them, the filter run
    # by Lance before it ranks, against the balanced tree the server builds now.
    query = PYTHON_AND_POSTGRES_QUERIES[0]
    print(f"\nOne BM25 search ({query!r}, ids), the condition as a chain (before) and as built:\n")
    print(common.table_head(["tags", "chain: CPU ms", "as built: CPU ms"]))
    for count in counts:
        built = Filters.of(tags=tags[count]).condition()
        chain, _ = _cpu_and_wall(lambda: _pre_filtered(tools, query, _chained(tags[count]), limit))  # noqa: B023
        now, _ = _cpu_and_wall(lambda: _pre_filtered(tools, query, built, limit))  # noqa: B023
        print(common.table_row([count, f"{chain * 1000:,.1f}", f"{now * 1000:,.1f}"]))


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench-filters", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--tags-only", action="store_true", help="measure the number of tags alone")
    arguments = parser.parse_args()
    common.installed(*search_table.MANUALS.values())

    import numpy as np

    from lancelot_schema import logs
    from lancelot_server.search.filters import Filters

    logs.configure("WARNING")
    db = WORK / "db"
    build(db)
    tools = common.in_process_tools({"LANCEDB_PATH": str(db), "EMBEDDING_MODEL": "bench-random"})

    vector = np.random.default_rng(11).standard_normal(WIDTH).astype(np.float32).tolist()
    # The table's vectors are random: so is the query's, given here rather than by an embedding endpoint.
    tools.modes._embed = lambda _layout, _query: vector
    tools.modes.check_vectors = lambda _layout: None
    if arguments.tags_only:
        tag_counts(tools, arguments.rounds, arguments.limit)
        tools.close()
        return
    filters = {
        "none": Filters(),
        "broad (tag python)": Filters.of(tags=["python"]),
        "dates (one year)": Filters.of(since="2020", until="2020"),
        "rare (tag rare)": Filters.of(tags=["rare"]),
        "none match (tag absent)": Filters.of(tags=["absent"]),
    }
    limit = arguments.limit
    timings: dict[tuple[str, str], list[float]] = {}
    for _ in range(arguments.rounds):
        for query in PYTHON_AND_POSTGRES_QUERIES:
            for mode in ("text", "vector"):
                for name, chosen in filters.items():
                    spent = common.timed(lambda: tools.search(query, mode=mode, limit=limit, filters=chosen))  # noqa: B023
                    timings.setdefault((mode, name), []).append(spent)
            for name, chosen in filters.items():
                condition = chosen.condition()
                spent = common.timed(lambda: _pre_filtered(tools, query, condition, limit))  # noqa: B023
                timings.setdefault(("BM25 ids, filtered before ranking", name), []).append(spent)
                if condition is not None:
                    spent = common.timed(lambda: _post_filtered(tools, query, condition, limit))  # noqa: B023
                    timings.setdefault(("BM25 ids, filtered after ranking", name), []).append(spent)
    reference = {mode: statistics.median(timings[mode, "none"]) for mode in ("text", "vector")}
    reference["BM25 ids"] = statistics.median(timings["BM25 ids, filtered before ranking", "none"])
    ratio = f"× unfiltered ({arguments.rounds} rounds of {len(PYTHON_AND_POSTGRES_QUERIES)} queries)"
    print(common.table_head(["search", "filter", "median ms", ratio]))
    for (mode, name), spent in timings.items():
        median = statistics.median(spent)
        base = reference[mode.split(",")[0]]
        print(common.table_row([mode, name, f"{median * 1000:.1f}", f"{median / base:.2f}"]))
    tag_counts(tools, arguments.rounds, arguments.limit)
    tools.close()


if __name__ == "__main__":
    main()
