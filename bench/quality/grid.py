"""Text-search weights and per-document caps, side by side on the labelled sets (how the defaults were chosen).

    .venv/bin/python -m bench.quality.grid PG_DB PY_DB

PG_DB and PY_DB are databases `lancelot-index` (layout 2: full-text indexes on text, title and heading)
built from Debian's postgresql-doc-15 and python3.11-doc HTML (the latter with `--exclude _sources
--exclude 'genindex*.html' --exclude _static`); the Python sets are the ones `scripts/bench-quality` wrote
under bench-work/quality/sets. For each (title boost, heading boost, cap) it prints hit@10, MRR@10 and
nDCG@10 of the top 10 pages per set: the BM25 of the text plus each field's BM25 times its boost, as
`lancelot_server.search.core.bm25` scores it.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import lancedb
from lancedb.query import BooleanQuery, MatchQuery, Occur

from bench import common
from lancelot_server.search.core import capped

SETS = {"python": "python.json", "python-api": "python-api.json", "python-genindex": "python-genindex.json"}
CONFIGS = [(0, 0, None), (0, 0, 1), (0, 0, 2), (0.1, 0, 1), (0.25, 0, 1), (0, 0.1, 1), (0.1, 0.1, 1)]
CONFIGS += [(0.1, 0.25, 1), (0.25, 0.25, 1), (0.1, 0.1, 2), (0.25, 0, 2)]


def pages(table: Any, query: str, title: float, heading: float, cap: int | None, k: int = 10) -> list[str]:
    clauses: list[Any] = [(Occur.SHOULD, MatchQuery(query, "text"))]
    clauses += [
        (Occur.SHOULD, MatchQuery(query, column, boost=boost))
        for column, boost in (("title", title), ("heading", heading))
        if boost
    ]
    search = BooleanQuery(clauses) if len(clauses) > 1 else clauses[0][1]
    rows = table.search(search, query_type="fts", fts_columns="text").select(["path", "_score"]).limit(400).to_arrow()
    # The server's own per-document cap, a page being its path.
    return capped(rows.column("path").to_pylist(), cap, k, str)


def scores(table: Any, queries: list[dict[str, Any]], title: float, heading: float, cap: int | None) -> str:
    hit = mrr = ndcg = 0.0
    for item in queries:
        ranked, relevant = pages(table, item["query"], title, heading, cap), set(item["relevant"])
        ranks = [rank for rank, page in enumerate(ranked, 1) if page in relevant]
        hit += bool(ranks)
        mrr += 1 / ranks[0] if ranks else 0
        gain = sum(
            1 / math.log2(rank + 1) for rank in sorted({ranked.index(page) + 1 for page in relevant & set(ranked)})
        )
        ndcg += gain / sum(1 / math.log2(rank + 1) for rank in range(1, min(len(relevant), 10) + 1))
    n = len(queries)
    return f"{hit / n:.3f} / {mrr / n:.3f} / {ndcg / n:.3f}"


def main() -> None:
    pg, py = (lancedb.connect(path).open_table("documents") for path in sys.argv[1:3])
    sets = [("postgresql", pg, json.loads((Path(__file__).parent / "queries.json").read_text(encoding="utf-8")))]
    work = common.WORK / "quality/sets"
    present = {name: work / file for name, file in SETS.items() if (work / file).is_file()}
    sets += [(name, py, json.loads(path.read_text(encoding="utf-8"))) for name, path in present.items()]
    if len(present) < len(SETS):
        # No command writes python-genindex now (the 400 entries of both kinds of docs/decisions.md's grid).
        left_out = ", ".join(name for name in SETS if name not in present)
        making = "scripts/bench-quality --modes text --sets python,python-api writes python and python-api"
        print(f"left out, not in {work}: {left_out} ({making})", file=sys.stderr)
    print(common.table_head(["title", "heading", "cap", *(name for name, _, _ in sets)]))
    for title, heading, cap in CONFIGS:
        row = [scores(table, data["queries"], title, heading, cap) for _, table, data in sets]
        print(common.table_row([title, heading, cap or "none", *row]), flush=True)


if __name__ == "__main__":
    main()
