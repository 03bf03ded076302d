"""The tokenizer of `--language cjk`, chosen by measurement: each candidate on Debian's reference manual.

    .venv/bin/python -m bench.quality.cjk_tokenizers [--work bench-work/quality/tokenizers] [--seed 13]

For each language (debian-reference-ja, -zh-cn) the working tree's `lancelot-index --language cjk`
indexes the 14 chapter pages once (copied as `debref.py` copies them); then, for each candidate, a copy
of that table gets its full-text indexes on text, title and heading made again with the candidate's
options (`create_scalar_index(column, "INVERTED", replace=True, **options)`, as the indexer's writer
makes them), and every query of the language's sets (`debref.py`: section titles, 2-3 words of a
section's paragraph, and the mostly Latin titles those sets leave out, `Systemd init`, which show how
a candidate treats commands and names) is answered by the server's own search (`Tools.search`, text
mode). Printed per candidate and set:
- by page, as bench-quality scores it (one passage per page, the server's default): hit@10, MRR@10, nDCG@10;
- by section, sharper with 14 pages (up to 10 passages per page): hit@10 and MRR@10, a hit counting when
  its heading trail holds the section's numbered title;
- the three indexes' size on disk and build time, and ms per query.

Candidates: ICU word segmentation (`icu`, Lance's default for CJK), `icu/split`, character n-grams of
1-2, 2-2 and 2-3, whitespace words (`simple`, what an index without `--language` gets, unstemmed here),
and for Chinese `jieba/default` with the dictionary of Debian's python3-jieba (Lance ships no model; a
jieba index needs the dictionary wherever it is searched too, the server included). jieba is left out
unless named: Lance loads its 5 MB dictionary for every query (1.5 to 2 s each), so measure it on a
sample, `--only icu,icu/split,jieba --every 5`. Lindera (Japanese) needs a dictionary compiled by
lindera-cli, which no reachable registry has: not measured.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench import common
from bench.quality import debref

K = 10
COMMON: dict[str, Any] = {"with_position": True, "lower_case": True, "ascii_folding": True}
PLAIN: dict[str, Any] = {**COMMON, "stem": False, "remove_stop_words": False}
CANDIDATES: dict[str, dict[str, Any]] = {
    "icu": {**PLAIN, "base_tokenizer": "icu"},
    "icu/split": {**PLAIN, "base_tokenizer": "icu/split"},
    "ngram 1-2": {**PLAIN, "base_tokenizer": "ngram", "min_ngram_length": 1, "max_ngram_length": 2},
    "ngram 2-2": {**PLAIN, "base_tokenizer": "ngram", "min_ngram_length": 2, "max_ngram_length": 2},
    "ngram 2-3": {**PLAIN, "base_tokenizer": "ngram", "min_ngram_length": 2, "max_ngram_length": 3},
    "simple": {**PLAIN, "base_tokenizer": "simple"},
    "jieba": {**PLAIN, "base_tokenizer": "jieba/default"},
}
LANGUAGES = {
    "ja": ("debref-ja", "debref-ja-body", "debref-ja-latin"),
    "zh-cn": ("debref-zh", "debref-zh-body", "debref-zh-latin"),
}
COLUMNS = ("text", "title", "heading")


def _jieba_home(work: Path) -> bool:
    """Lance's model folder with Debian's jieba dictionary in it (`LANCE_LANGUAGE_MODEL_HOME`, read
    when an index is built or searched); False when python3-jieba is not installed."""
    if not debref.JIEBA_DICT.exists():
        return False
    home = work / "language_models"
    (home / "jieba/default").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(debref.JIEBA_DICT, home / "jieba/default/dict.txt")
    os.environ["LANCE_LANGUAGE_MODEL_HOME"] = str(home)
    return True


def _base(docs: Path, db: Path) -> None:
    shutil.rmtree(db, ignore_errors=True)
    common.index(docs, db, "--quiet", "--language", "cjk")


def _reindex(base: Path, db: Path, options: dict[str, Any]) -> tuple[float, int]:
    """A copy of `base` with its full-text indexes made with `options`: seconds to build them, bytes."""
    import lance

    shutil.rmtree(db, ignore_errors=True)
    shutil.copytree(base, db)
    dataset = lance.dataset(str(db / "documents.lance"))
    started = time.perf_counter()
    for column in COLUMNS:
        dataset.create_scalar_index(column, "INVERTED", name=f"{column}_idx", replace=True, **options)
    seconds = time.perf_counter() - started
    size = sum(index.total_size_bytes for index in dataset.describe_indices() if index.field_names[0] in COLUMNS)
    return seconds, size


def _trail(heading: str | None) -> list[str]:
    return [" ".join(part.split()) for part in (heading or "").split(" > ")]


def score(tools: Any, queries: list[dict[str, Any]]) -> dict[str, float]:
    """Mean metrics of `queries` (one relevant page each) with `tools`' text search, by page and by section."""
    totals = dict.fromkeys(("hit", "mrr", "ndcg", "section hit", "section mrr", "ms"), 0.0)
    tools.search(queries[0]["query"], mode="text", limit=K)  # opens the table and its indexes: not timed
    for item in queries:
        started = time.perf_counter()
        hits = tools.search(item["query"], mode="text", limit=K)["hits"]
        totals["ms"] += 1000 * (time.perf_counter() - started)
        rank = next((rank for rank, hit in enumerate(hits, 1) if hit["source"] in item["relevant"]), None)
        if rank:
            totals["hit"] += 1
            totals["mrr"] += 1 / rank
            totals["ndcg"] += 1 / math.log2(rank + 1)  # one relevant page: the ideal DCG is 1
        passages = tools.search(item["query"], mode="text", limit=K, per_document=K)["hits"]
        section = " ".join(item["section"].split())
        rank = next(
            (
                rank
                for rank, hit in enumerate(passages, 1)
                if hit["source"] in item["relevant"] and section in _trail(hit.get("heading"))
            ),
            None,
        )
        if rank:
            totals["section hit"] += 1
            totals["section mrr"] += 1 / rank
    return {name: total / len(queries) for name, total in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.quality.cjk_tokenizers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--work", default=str(common.WORK / "quality/tokenizers"))
    parser.add_argument("--seed", type=int, default=13, help="seed of the paragraph words (debref.py)")
    parser.add_argument("--only", help="comma-separated candidates (default: all but jieba): " + ", ".join(CANDIDATES))
    parser.add_argument("--every", type=int, default=1, help="score every Nth query only (for jieba's slow queries)")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    jieba = _jieba_home(work)
    from lancelot_schema import logs

    logs.configure("WARNING")
    chosen = args.only.split(",") if args.only else [name for name in CANDIDATES if name != "jieba"]
    print(f"Command: `{' '.join(['python -m bench.quality.cjk_tokenizers', *sys.argv[1:]])}`; text search, top {K}\n")
    headers = ["set", "tokenizer", "hit@10", "MRR@10", "nDCG@10", "section hit@10", "section MRR@10"]
    print(common.table_head([*headers, "index KiB", "build s", "ms/query"]))
    for lang, names in LANGUAGES.items():
        specs = {name: debref.build(name, work, args.seed) for name in names}
        base = work / "db" / lang / "base"
        _base(Path(specs[names[0]]["docs"]), base)
        for candidate in chosen:
            if candidate == "jieba" and (lang != "zh-cn" or not jieba):
                continue
            db = work / "db" / lang / candidate.replace(" ", "-").replace("/", "-")
            seconds, size = _reindex(base, db, CANDIDATES[candidate])
            tools = common.in_process_tools({"LANCEDB_PATH": str(db)})
            try:
                for name, spec in specs.items():
                    queries = spec["queries"][:: args.every]
                    r = score(tools, queries)
                    cells = [f"{name} ({len(queries)})", candidate]
                    cells += [f"{r[key]:.3f}" for key in ("hit", "mrr", "ndcg", "section hit", "section mrr")]
                    cells += [f"{size / 1024:.0f}", f"{seconds:.2f}", f"{r['ms']:.1f}"]
                    print(common.table_row(cells), flush=True)
            finally:
                tools.close()


if __name__ == "__main__":
    main()
