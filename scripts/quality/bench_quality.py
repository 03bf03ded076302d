"""Recall@10 and MRR@10 of text, vector and hybrid search with real semantic vectors (all-MiniLM-L6-v2).

Run by `scripts/bench-quality`, in the project's venv. Steps:
1. start `model_server.py` (the real model behind an OpenAI-compatible endpoint) in the bench's venv;
2. check the model serves sensible vectors through the openai client (a paraphrase is nearer than an
   unrelated sentence); `--check-only` stops here;
3. index the documents with `lancelot-index DOCS DB --embed`, OPENAI_BASE_URL pointing at the model;
4. ask every labelled question in `queries.json` through the server's `lancedb_search` tool body in
   each mode, and score the pages of the top 10 hits against the labels.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MODEL = "all-MiniLM-L6-v2"
MODES = ("text", "vector", "hybrid")
K = 10

SANITY = (
    ("How do I reclaim disk space used by deleted rows?", "VACUUM reclaims storage occupied by dead tuples."),
    ("How do I reclaim disk space used by deleted rows?", "The planner estimates the cost of each join order."),
)


@contextmanager
def model_endpoint(python: str) -> Iterator[str]:
    """The model server as a subprocess of the bench venv's `python`; yields its base URL."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    command = [python, str(HERE / "model_server.py"), "--port", "0"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.strip().isdigit():
            raise SystemExit(f"the model server did not start (exit {proc.wait()})")
        yield f"http://127.0.0.1:{int(line)}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def check_model(url: str) -> dict[str, float]:
    """Embed a few sentences through the real openai client; the paraphrase must be the nearer one."""
    import openai

    with openai.OpenAI(api_key="unused", base_url=url, max_retries=0) as client:
        started = time.perf_counter()
        texts = [SANITY[0][0], SANITY[0][1], SANITY[1][1]]
        vectors = [item.embedding for item in client.embeddings.create(model=MODEL, input=texts).data]
        seconds = time.perf_counter() - started
    width = len(vectors[0])
    near, far = cosine(vectors[0], vectors[1]), cosine(vectors[0], vectors[2])
    print(f"model check: width {width}; cosine(question, answer) {near:.3f} > cosine(question, unrelated) {far:.3f}")
    if width != 384 or not near > far + 0.1:
        raise SystemExit("the model endpoint answers vectors that make no sense; stopping")
    return {"width": width, "near": near, "far": far, "seconds": seconds}


def index(docs: str, db: Path, url: str, embed: bool) -> float:
    env = {**os.environ, "OPENAI_BASE_URL": url, "EMBEDDING_MODEL": MODEL, "OPENAI_API_KEY": "unused"}
    command = [str(ROOT / ".venv/bin/lancelot-index"), docs, str(db), "--quiet", *(["--embed"] if embed else [])]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"lancelot-index failed ({done.returncode}):\n{done.stderr}")
    return time.perf_counter() - started


def score(ranked_pages: list[str], relevant: list[str]) -> tuple[float, float]:
    """(recall@K, reciprocal rank@K) of one query: pages of the top K hits against the labelled pages."""
    top = ranked_pages[:K]
    recall = len(set(top) & set(relevant)) / len(relevant)
    first = next((rank for rank, page in enumerate(top, start=1) if page in relevant), None)
    return recall, (1.0 / first if first else 0.0)


def evaluate(db: Path, url: str, queries: list[dict[str, Any]], modes: tuple[str, ...]) -> dict[str, dict[str, float]]:
    from lancelot_schema.settings import resolve
    from lancelot_server.store import Store
    from lancelot_server.tools import Tools

    settings = resolve(
        {"LANCEDB_PATH": str(db), "OPENAI_BASE_URL": url, "EMBEDDING_MODEL": MODEL, "OPENAI_API_KEY": "unused"}
    )
    tools = Tools(Store(settings.db_path), settings)
    results: dict[str, dict[str, float]] = {}
    try:
        for mode in modes:
            recalls, ranks, fallbacks, seconds = [], [], 0, 0.0
            for item in queries:
                started = time.perf_counter()
                reply = tools.search(item["query"], mode=mode, limit=K)
                seconds += time.perf_counter() - started
                fallbacks += reply["searchType"] != mode
                recall, rank = score([hit["source"] for hit in reply["hits"]], item["relevant"])
                recalls.append(recall)
                ranks.append(rank)
            results[mode] = {
                "recall@10": sum(recalls) / len(recalls),
                "mrr@10": sum(ranks) / len(ranks),
                "fallbacks": fallbacks,
                "ms_per_query": 1000 * seconds / len(queries),
            }
    finally:
        tools.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-python", required=True, help="python of the venv with torch and the model")
    parser.add_argument("--queries", default=str(HERE / "queries.json"))
    parser.add_argument("--work", default=str(ROOT / "bench-work/quality"))
    parser.add_argument("--check-only", action="store_true", help="only check that the model serves sensible vectors")
    parser.add_argument("--text-only", action="store_true", help="index without --embed; score text search alone")
    parser.add_argument(
        "--reuse-index", action="store_true", help="score the database a previous run built (no indexing)"
    )
    args = parser.parse_args()
    from lancelot_schema import logs

    logs.configure("WARNING")
    spec = json.loads(Path(args.queries).read_text(encoding="utf-8"))
    db = Path(args.work) / "db"
    with model_endpoint(args.model_python) as url:
        check = check_model(url)
        if args.check_only:
            return
        if args.reuse_index and (db / "documents.lance").is_dir():
            seconds = json.loads((Path(args.work) / "results.json").read_text(encoding="utf-8"))["index_seconds"]
            print(f"scoring the database of the previous run ({db})")
        else:
            shutil.rmtree(db, ignore_errors=True)
            seconds = index(spec["docs"], db, url, embed=not args.text_only)
            print(
                f"indexed {spec['package']}"
                + ("" if args.text_only else f" with --embed ({MODEL})")
                + f" in {seconds:.0f} s"
            )
            # Written now, so that --reuse-index finds the indexing time if scoring fails.
            (Path(args.work) / "results.json").write_text(
                json.dumps({"index_seconds": seconds}) + "\n", encoding="utf-8"
            )
        results = evaluate(db, url, spec["queries"], ("text",) if args.text_only else MODES)
    print(f"\n{len(spec['queries'])} labelled questions over {spec['package']}; top {K} hits scored by page\n")
    print("| search | recall@10 | MRR@10 | fell back | ms/query |")
    print("|---|---|---|---|---|")
    for mode, r in results.items():
        print(f"| {mode} | {r['recall@10']:.3f} | {r['mrr@10']:.3f} | {r['fallbacks']:.0f} | {r['ms_per_query']:.0f} |")
    out = Path(args.work) / "results.json"
    out.write_text(
        json.dumps({"model_check": check, "index_seconds": seconds, "results": results}, indent=1) + "\n",
        encoding="utf-8",
    )
    print(f"\n(also in {out})")


if __name__ == "__main__":
    sys.exit(main())
