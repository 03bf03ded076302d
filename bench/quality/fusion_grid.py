"""Hybrid fusion rules side by side on the labelled sets (how the hybrid fusion and its text weight were chosen).

    .venv/bin/python -m bench.quality.fusion_grid [DB_FOLDER] [--sets NAMES] [--weights 0.5,0.55,...]
    .venv/bin/python -m bench.quality.fusion_grid DB_FOLDER --local-model FOLDER --sets debref-ja,debref-zh

DB_FOLDER holds the databases one side of `scripts/bench-quality` built (default: the newest
`bench-work/quality/db/current*`); the sets are those the bench writes (the same seed and size), written
again under `--work`. A side indexed with `--embed` against the bench's model endpoint: the script starts
that endpoint (its vectors cache makes query vectors free after the first run). A side indexed with
`--embed local:FOLDER` (`--local-model`): `--local-model FOLDER` names the same folder and the server embeds
each query with it, as with LANCELOT_EMBED_MODEL_PATH; no endpoint. Each query is searched in hybrid mode by the
server's own code (top 10, one passage per page), and the text and vector lists it fused are kept: 20 deep,
uncapped, or deeper where the server went deeper. The grid fuses them again as the server does with one
passage per page (each list keeps a page's best passage; a page's entries in both lists fuse): by reciprocal
rank (k = 60, the rule before) and by scaled scores at each text weight; at the server's weight it gives the
server's reply, its first row. It prints hit@10 / MRR@10 per set, then each weight's MRR@10 against `--against`
(default: the server's weight) query by query: the mean change ± its standard error, and how many queries
move up and down.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import common
from bench.quality import baseline, model, sets
from bench.quality.evaluate import K, score

WORK = common.WORK / "quality"
NAMES = sets.NAMES
WEIGHTS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)

Page = tuple[str, float]  # a page and its best passage's score in one list
Fuse = Callable[[list[Page], list[Page], bool], list[str]]  # text, vector, whether text lists every match


def lists(db_folder: Path, names: list[str], work: Path, env: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """`fused_lists` of each set, over its corpus's database in `db_folder`, with the settings in `env` (the
    model's: an endpoint, or a local model's folder)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name, spec in sets.load(names, work, sets.SIZE, sets.SEED).items():
        tools = common.in_process_tools({**env, "LANCEDB_PATH": str(db_folder / spec["package"])})
        queries = json.loads(Path(spec["file"]).read_text(encoding="utf-8"))["queries"]
        try:
            found[name] = fused_lists(tools, queries)
        finally:
            tools.close()
    return found


def fused_lists(tools: Any, queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each query's relevant pages, the pages of the server's own hybrid reply, and the text and vector lists
    that reply fused, caught on their way into `fused_ranking` (the last, deepest pair)."""
    from unittest import mock

    from lancelot_server.search import fusion, modes

    rows = []
    # The lists are caught, not fetched here: hybrid search's own loop decides how deep they go.
    with mock.patch.object(modes, "fused_ranking", wraps=fusion.fused_ranking) as fusing:
        for item in queries:
            reply = tools.search(item["query"], mode="hybrid", limit=K)
            if reply["searchType"] != "hybrid":
                raise SystemExit(f"{item['query']!r} fell back to {reply['searchType']} search: {reply.get('note')}")
            (matched, nearest, *_), options = fusing.call_args
            rows.append(
                {
                    "relevant": item["relevant"],
                    "server": [hit["source"] for hit in reply["hits"]],
                    "text": [(hit["source"], hit["score"]) for hit in matched],
                    "vector": [(hit["source"], hit["score"]) for hit in nearest],
                    "complete": options["every_match"],
                }
            )
    return rows


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


def by_score(weight: float) -> Fuse:
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


def per_query(rows: list[dict[str, Any]], fuse: Fuse | None) -> list[dict[str, float]]:
    """Each query's metrics (`evaluate.score`) over the pages `fuse` ranks from its two lists (None: the pages of
    the server's own reply)."""
    scores = []
    for row in rows:
        if fuse is None:
            scores.append(score(row["server"], row["relevant"]))
            continue
        text, vector = (best_per_page([tuple(hit) for hit in row[which]]) for which in ("text", "vector"))
        scores.append(score(fuse(text, vector, row["complete"]), row["relevant"]))
    return scores


def metrics(scores: list[dict[str, float]]) -> str:
    return " / ".join(f"{statistics.fmean(got[name] for got in scores):.3f}" for name in ("hit@10", "mrr@10"))


def change(scores: list[dict[str, float]], against: list[dict[str, float]]) -> str:
    """MRR@10 of `scores` less that of `against`, the same queries: the mean ± its standard error (the queries'
    spread over the square root of their number), and how many queries rank a relevant page higher / lower."""
    moved = [got["mrr@10"] - was["mrr@10"] for got, was in zip(scores, against, strict=True)]
    spread = statistics.stdev(moved) / len(moved) ** 0.5 if len(moved) > 1 else 0.0
    up, down = sum(value > 0 for value in moved), sum(value < 0 for value in moved)
    return f"{statistics.fmean(moved):+.3f} ± {spread:.3f} ({up} up, {down} down)"


def model_env(local_model: Path | None) -> dict[str, str]:
    """The settings that give queries their vectors, less the endpoint's URL: a local model's folder (and an
    endpoint address nothing serves, so that a table of the endpoint's vectors fails rather than goes online).
    A table's stamp picks the query's embedder, the endpoint's model or the local folder's, as in a server."""
    env = {"EMBEDDING_MODEL": model.MODEL, "OPENAI_API_KEY": "unused"}
    if local_model is None:
        return env
    return {**env, "OPENAI_BASE_URL": model.NOWHERE, "LANCELOT_EMBED_MODEL_PATH": str(local_model)}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.quality.fusion_grid", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("db_folder", nargs="?", type=Path, help="default: the newest current* under WORK/db")
    parser.add_argument("--sets", default=",".join(NAMES), help="comma-separated: " + ", ".join(NAMES))
    parser.add_argument("--local-model", type=Path, metavar="FOLDER", help="the model folder the tables were made with")
    parser.add_argument("--weights", default=",".join(map(str, WEIGHTS)), help="text weights, comma-separated")
    parser.add_argument("--against", type=float, help="the weight the others are set against (default: the server's)")
    parser.add_argument("--work", type=Path, default=WORK, help="where the sets are written (and the endpoint's venv)")
    args = parser.parse_args(argv)
    args.sets = [name for name in args.sets.split(",") if name]
    args.weights = [float(weight) for weight in args.weights.split(",") if weight]
    return args


def main(argv: list[str] | None = None) -> None:
    from lancelot_schema import logs
    from lancelot_server.search.fusion import TEXT_WEIGHT

    logs.configure("WARNING")  # the server's line per search would bury the tables
    args = parse(argv)
    db_folder = args.db_folder or baseline.newest_databases(args.work)
    against = TEXT_WEIGHT if args.against is None else args.against
    weights = sorted({*args.weights, against})
    env = model_env(args.local_model)
    if args.local_model:
        found = lists(db_folder, args.sets, args.work, env)
    else:
        with model.endpoint(model.ensure_venv(args.work / "venv"), args.work / "embeddings.sqlite") as url:
            found = lists(db_folder, args.sets, args.work, {**env, "OPENAI_BASE_URL": url})
    rules: list[tuple[str, Fuse | None]] = [(f"the server's hybrid (text {TEXT_WEIGHT})", None)]
    rules += [("reciprocal rank (k = 60)", by_rank)]
    rules += [(f"scaled scores, text {weight}", by_score(weight)) for weight in weights]
    scores = {label: {name: per_query(found[name], fuse) for name in args.sets} for label, fuse in rules}
    how = f"queries embedded by {args.local_model}" if args.local_model else "queries embedded by the endpoint"
    print(f"Databases: {db_folder}; {how}; load average {common.load_average(3)}")
    print("hit@10 / MRR@10 of the top 10 pages")
    print(common.table_head(["fusion", *(f"{name} ({len(found[name])})" for name in args.sets)]))
    for label, by_set in scores.items():
        print(common.table_row([label, *(metrics(by_set[name]) for name in args.sets)]))
    base = scores[f"scaled scores, text {against}"]
    print(f"\nMRR@10 against text {against}: mean change ± standard error (queries up, down)")
    print(common.table_head(["text weight", *args.sets]))
    for weight in weights:
        by_set = scores[f"scaled scores, text {weight}"]
        print(common.table_row([weight, *(change(by_set[name], base[name]) for name in args.sets)]))


if __name__ == "__main__":
    main()
