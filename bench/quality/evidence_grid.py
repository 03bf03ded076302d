"""Document evidence side by side on every labelled set (how text search's DOCUMENT_EVIDENCE was chosen).

    .venv/bin/python -m bench.quality.evidence_grid [DB_FOLDER]

DB_FOLDER holds the databases one side of `scripts/bench-quality` built (default: the newest
`bench-work/quality/db/current-*`); the sets are those the bench writes (the same seed and size). For each
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

from bench.quality import sets
from bench.quality.evaluate import score

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "bench-work/quality"
NAMES = ["postgresql", "python", "python-api", "debref-ja", "debref-zh", "debref-ja-body", "debref-zh-body"]
DUMPED = 50
SHARES = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.1)
DEPTHS = (20, 50)

Passage = tuple[str, float]


def lists(db_folder: Path) -> dict[str, list[dict[str, Any]]]:
    """For each set, each query's relevant pages and its BM25 passages (page, score), best first."""
    from lancelot_schema.settings import resolve
    from lancelot_server.search import core
    from lancelot_server.storage.store import Store
    from lancelot_server.tools import Tools

    core.DOCUMENT_EVIDENCE = 0.0  # the raw ranking; the grid adds the evidence itself
    found: dict[str, list[dict[str, Any]]] = {}
    for name, spec in sets.load(NAMES, WORK, 400, 13).items():
        settings = resolve({"LANCEDB_PATH": str(db_folder / spec["package"])})
        tools = Tools(Store(settings.db_path), settings)
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
    newest = sorted((WORK / "db").glob("current-*"), key=lambda path: path.stat().st_mtime)
    db_folder = Path(sys.argv[1]) if len(sys.argv) > 1 else newest[-1]
    found = lists(db_folder)
    print(f"Databases: {db_folder}; hit@10 / MRR@10 / nDCG@10 of the top 10 pages, text search")
    print("| depth | share | " + " | ".join(NAMES) + " |")
    print("|---|---|" + "---|" * len(NAMES))
    for depth in DEPTHS:
        for share in SHARES:
            cells = " | ".join(metrics(found[name], share, depth) for name in NAMES)
            print(f"| {depth} | {share} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
