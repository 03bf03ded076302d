"""Hybrid fusion rules side by side on every labelled set (how the hybrid fusion and its text weight were chosen).

    .venv/bin/python -m bench.quality.fusion_grid [DB_FOLDER]

DB_FOLDER holds the databases one side of `scripts/bench-quality` built (default: the newest
`bench-work/quality/db/current*`), indexed with `--embed` against its model endpoint; the sets are those
the bench writes (the same seed and size). The script starts that endpoint (its vectors cache makes
query vectors free after the first run), takes for each query the server's own text list and vector list,
40 deep and uncapped, and fuses the first 20 of each as the server does with one passage per page (each
list keeps a page's best passage; a page's entries in both lists fuse): by reciprocal rank (k = 60, the
rule before) and by scaled scores with text weights from 0.5 to 0.6. It prints hit@10 / MRR@10 per set.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import common
from bench.quality import baseline, model, sets
from bench.quality.evaluate import score

WORK = common.WORK / "quality"
NAMES = sets.NAMES
DEPTH, DUMPED = 20, 40

Page = tuple[str, float]  # a page and its best passage's score in one list


def lists(db_folder: Path, url: str) -> dict[str, list[dict[str, Any]]]:
    """For each set, each query's relevant pages and its text and vector hits, as the server ranks them."""
    from lancelot_server.search.core import Wanted, vector
    from lancelot_server.search.modes import Query

    found: dict[str, list[dict[str, Any]]] = {}
    for name, spec in sets.load(list(NAMES), WORK, sets.SIZE, sets.SEED).items():
        env = {"LANCEDB_PATH": str(db_folder / spec["package"]), "EMBEDDING_MODEL": model.MODEL}
        tools = common.in_process_tools({**env, "OPENAI_API_KEY": "unused", "OPENAI_BASE_URL": url})
        _, handle, table_layout = tools.opened(tools.tables.default())
        queries = json.loads(Path(spec["file"]).read_text(encoding="utf-8"))["queries"]
        found[name] = []
        for item in queries:
            asked, pool = Query(item["query"], tools.embedder), Wanted(DUMPED)
            nearest = vector(handle, table_layout, tools.modes._embed(table_layout, asked), pool)
            matched, _, _ = tools.modes._text(handle, table_layout, asked, pool)
            found[name].append(
                {
                    "relevant": item["relevant"],
                    "text": [(hit["source"], hit["score"]) for hit in matched],
                    "vector": [(hit["source"], hit["score"]) for hit in nearest],
                }
            )
        tools.close()
    return found


def best_per_page(hits: list[Page]) -> list[Page]:
    """Each page once, at its best passage's place (hits come best first)."""
    kept: dict[str, float] = {}
    for page, value in hits:
        kept.setdefault(page, value)
    return list(kept.items())


def by_rank(text: list[Page], vector: list[Page], _complete: bool) -> list[str]:
    fused: dict[str, float] = {}
    for ranking in (text, vector):
        for rank, (page, _) in enumerate(ranking, 1):
            fused[page] = fused.get(page, 0.0) + 1 / (60 + rank)
    return sorted(fused, key=lambda page: -fused[page])


def by_score(weight: float) -> Callable[[list[Page], list[Page], bool], list[str]]:
    from lancelot_server.search.fusion import relative_score_fusion, scaled

    def fuse(text: list[Page], vector: list[Page], complete: bool) -> list[str]:
        floor = 0.0 if complete else None
        ranked = relative_score_fusion(
            [
                list(zip([page for page, _ in text], scaled([v for _, v in text], floor=floor), strict=True)),
                list(zip([p for p, _ in vector], scaled([v for _, v in vector], lower_is_better=True), strict=True)),
            ],
            (weight, 1 - weight),
        )
        return [page for page, _ in ranked]

    return fuse


def metrics(rows: list[dict[str, Any]], fuse: Callable[[list[Page], list[Page], bool], list[str]]) -> str:
    hit = mrr = 0.0
    for row in rows:
        text, vector = (best_per_page([tuple(hit) for hit in row[which][:DEPTH]]) for which in ("text", "vector"))
        got = score(fuse(text, vector, len(row["text"]) < DEPTH), row["relevant"])
        hit, mrr = hit + got["hit@10"], mrr + got["mrr@10"]
    return f"{hit / len(rows):.3f} / {mrr / len(rows):.3f}"


def main() -> None:
    db_folder = Path(sys.argv[1]) if len(sys.argv) > 1 else baseline.newest_databases(WORK)
    with model.endpoint(model.ensure_venv(WORK / "venv"), WORK / "embeddings.sqlite") as url:
        found = lists(db_folder, url)
    rules = [("reciprocal rank (k = 60)", by_rank)]
    rules += [(f"scaled scores, text {weight}", by_score(weight)) for weight in (0.5, 0.54, 0.55, 0.56, 0.6)]
    print(f"Databases: {db_folder}; hit@10 / MRR@10 of the top 10 pages")
    print(common.table_head(["fusion", *NAMES]))
    for label, fuse in rules:
        print(common.table_row([label, *(metrics(found[name], fuse) for name in NAMES)]), flush=True)


if __name__ == "__main__":
    main()
