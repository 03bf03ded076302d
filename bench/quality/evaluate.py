"""Score one database against one labelled set, in whichever venv runs this file; JSON metrics out.

`python -m bench.quality` runs it with the current venv's python and with the baseline worktree's, so each
side searches with its own server code. Hence it imports only what every version since the benchmark
began has: `lancelot_schema.settings.resolve`, the store's `Store` (`lancelot_server.storage.store`, before
a7e1468 `lancelot_server.store`), `lancelot_server.tools.Tools` with `.search(query, mode=, limit=)`, whose
reply has `hits` (each with `source`) and `searchType`.

Scoring is by page, over the top K hits (passages) in their order:
- hit@K: 1 when a relevant page is among them;
- MRR@K: 1 / rank of the first hit on a relevant page;
- nDCG@K: binary gain 1 at the first hit on each relevant page (a page's later passages gain nothing),
  discounted by log2(rank + 1), over the best possible for min(#relevant, K) pages;
- recall@K: share of the relevant pages among them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

K = 10


def score(ranked_pages: list[str], relevant: list[str]) -> dict[str, float]:
    """The metrics of one query: the pages of the top K hits, in order, against the relevant pages."""
    wanted = set(relevant)
    seen: set[str] = set()
    first, dcg = None, 0.0
    for rank, page in enumerate(ranked_pages[:K], start=1):
        if page in wanted and page not in seen:
            seen.add(page)
            first = first or rank
            dcg += 1 / math.log2(rank + 1)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(wanted), K) + 1))
    return {
        "hit@10": float(first is not None),
        "mrr@10": 1 / first if first else 0.0,
        "ndcg@10": dcg / ideal,
        "recall@10": len(seen) / len(wanted),
    }


def evaluate(db: str, queries: list[dict[str, object]], modes: list[str], env: dict[str, str]) -> dict[str, object]:
    from lancelot_schema.settings import resolve
    from lancelot_server.tools import Tools

    try:
        from lancelot_server.storage.store import Store
    except ImportError:  # a side from before the server's subpackages (the baseline, 888f04f)
        from lancelot_server.store import Store  # type: ignore[no-redef]

    settings = resolve({"LANCEDB_PATH": db, **env})
    tools = Tools(Store(settings.db_path), settings)
    results: dict[str, object] = {}
    try:
        for mode in modes:
            totals: dict[str, float] = {}
            fallbacks, seconds = 0, 0.0
            for item in queries:
                started = time.perf_counter()
                reply = tools.search(str(item["query"]), mode=mode, limit=K)
                seconds += time.perf_counter() - started
                fallbacks += reply["searchType"] != mode
                scores = score([hit["source"] for hit in reply["hits"]], list(item["relevant"]))  # type: ignore[call-overload]
                for name, value in scores.items():
                    totals[name] = totals.get(name, 0.0) + value
            results[mode] = {
                **{name: total / len(queries) for name, total in totals.items()},
                "fallbacks": fallbacks,
                "ms_per_query": 1000 * seconds / len(queries),
            }
    finally:
        tools.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--queries", required=True, help="a JSON file with `queries`: [{query, relevant}]")
    parser.add_argument("--modes", default="text", help="comma-separated: text,vector,hybrid")
    parser.add_argument("--url", help="OPENAI_BASE_URL of the embedding endpoint (vector and hybrid)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--local-model", help="the folder of the local model a table's vectors came from")
    parser.add_argument("--out", required=True, help="where to write the metrics as JSON")
    args = parser.parse_args()
    try:
        from lancelot_schema import logs

        logs.configure("WARNING")
    except ImportError:  # logging set-up is a nicety; older trees may lack it
        pass
    env = {"EMBEDDING_MODEL": args.model, "OPENAI_API_KEY": "unused"}
    if args.url:
        env["OPENAI_BASE_URL"] = args.url
    if args.local_model:
        env["LANCELOT_EMBED_MODEL_PATH"] = args.local_model
    queries = json.loads(Path(args.queries).read_text(encoding="utf-8"))["queries"]
    results = evaluate(args.db, queries, args.modes.split(","), env)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
