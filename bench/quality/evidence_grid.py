"""Document evidence side by side on every labelled set (how text search's DOCUMENT_EVIDENCE was chosen).

    .venv/bin/python -m bench.quality.evidence_grid [DB_FOLDER]

DB_FOLDER holds the databases one side of `scripts/bench-quality` built (default: the newest
`bench-work/quality/db/current*`); the sets are those the bench writes (the same seed and size). For each
query it takes the server's own BM25 list, 50 passages deep, uncapped and without document evidence, then
ranks pages as one passage per page would with evidence `share`: a passage scores its BM25 plus `share`
times the BM25 of its page's other passages among the first `depth`. It prints hit@10 / MRR@10 / nDCG@10
per set for each (depth, share). No model is needed: text search only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench import common
from bench.quality import baseline, sets
from bench.quality.evaluate import score

WORK = common.WORK / "quality"
NAMES = sets.NAMES
DUMPED = 50
SHARES = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.1)
DEPTHS = (20, 50)

Passage = tuple[str, float]


def lists(db_folder: Path) -> dict[str, list[dict[str, Any]]]:
    """For each set, each query's relevant pages and its BM25 passages (page, score), best first."""
    from lancelot_server.search import core

    core.DOCUMENT_EVIDENCE = 0.0  # the raw ranking; the grid adds the evidence itself
    found: dict[str, list[dict[str, Any]]] = {}
    for name, spec in sets.load(list(NAMES), WORK, sets.SIZE, sets.SEED).items():
        tools = common.in_process_tools({"LANCEDB_PATH": str(db_folder / spec["package"])})
        queries = json.loads(Path(spec["file"]).read_text(encoding="utf-8"))["queries"]
        found[name] = []
        for item in queries:
            hits = tools.search(item["query"], mode="text", limit=DUMPED, per_document=DUMPED)["hits"]
            passages = [(hit["source"], hit["score"]) for hit in hits]
            found[name].append({"relevant": item["relevant"], "passages": passages})
        tools.close()
    return found


def pages(passages: list[Passage], share: float, depth: int) -> list[str]:
    """Pages by their best passage's score with evidence, as the server's cap of one per page shows them."""
    from lancelot_server.search.core import capped, with_document_evidence

    rows = [{"page": page, "score": value} for page, value in passages[:depth]]
    with_document_evidence(rows, "score", share, lambda row: row["page"])
    rows.sort(key=lambda row: -row["score"])
    return capped([row["page"] for row in rows], 1, len(rows), str)


def metrics(rows: list[dict[str, Any]], share: float, depth: int) -> str:
    totals = {"hit@10": 0.0, "mrr@10": 0.0, "ndcg@10": 0.0}
    for row in rows:
        got = score(pages([tuple(hit) for hit in row["passages"]], share, depth), row["relevant"])
        totals = {name: totals[name] + got[name] for name in totals}
    return " / ".join(f"{total / len(rows):.3f}" for total in totals.values())


def main() -> None:
    db_folder = Path(sys.argv[1]) if len(sys.argv) > 1 else baseline.newest_databases(WORK)
    found = lists(db_folder)
    print(f"Databases: {db_folder}; hit@10 / MRR@10 / nDCG@10 of the top 10 pages, text search")
    print(common.table_head(["depth", "share", *NAMES]))
    for depth in DEPTHS:
        for share in SHARES:
            cells = [metrics(found[name], share, depth) for name in NAMES]
            print(common.table_row([depth, share, *cells]), flush=True)


if __name__ == "__main__":
    main()
