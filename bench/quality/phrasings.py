"""Do two phrasings beat one? hit@10 and MRR@10 of phrasing A alone, phrasing B alone and both fused (`queries`).

    .venv/bin/python -m bench.quality.phrasings [--sets postgresql,debref-ja,debref-zh] [--reuse-index]

The PostgreSQL set's queries are questions ("How do I reclaim disk space used by deleted rows?"), one per label.
A is the question as written; B, its keywords, is derived by one fixed rule, never by hand: the question's
words (runs of letters, digits and `_`, lower-cased) that are not in the English full-text index's stop list
(`core.STOP_WORDS`), keeping the `KEYWORDS` that the fewest passages of the indexed table contain (the rarest
name the thing asked about; ties go to the earlier word), in the question's order. A question with no more
content words than that keeps them all. A control row, B', keeps every content word: BM25 leaves the stop
words out itself, so B' asks what A asks, and only a B that drops content words can differ. Everything is
this tree's code over tables its own `lancelot-index` built (under bench-work/phrasings), text search (no
embedding model); scoring is `evaluate.score`'s, by page, top 10 hits.

The Japanese and Chinese sets of Debian's reference manual have two phrasings of each section already, each
made by `debref.py`'s own rule: its title (`debref-ja`: a name, A) and 3 content words of its first paragraph
(`debref-ja-body`: keywords, B). Paired by section (`PAIRED`), they need no rule of ours; indexed with
`--language cjk`. Scored by page (14 chapter pages), so MRR@10 carries the comparison.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench import common
from bench.quality import evaluate, sets

KEYWORDS = 3
# The title sets and the body-words sets of the same sections (`debref.py`).
PAIRED = {"debref-ja": "debref-ja-body", "debref-zh": "debref-zh-body"}
WORD = re.compile(r"\w+")
WORK = common.WORK / "phrasings"


def passage_counts(db: Path) -> Counter[str]:
    """How many passages of the table contain each word (lower-cased), for the keyword rule."""
    import lance

    counts: Counter[str] = Counter()
    dataset = lance.dataset(str(db / "documents.lance"))
    for batch in dataset.to_batches(columns=["text"]):
        for text in batch.column("text").to_pylist():
            counts.update(set(WORD.findall(text.lower())))
    return counts


def keywords(question: str, counts: Counter[str], most: int | None = KEYWORDS) -> str:
    """Phrasing B of `question`: its `most` rarest content words (all, with None), in its order (the rule in this
    module's docstring)."""
    from lancelot_server.search.core import STOP_WORDS

    words = list(dict.fromkeys(word for word in WORD.findall(question.lower()) if word not in STOP_WORDS))
    kept = sorted(range(len(words)), key=lambda at: (counts[words[at]], at))[:most]
    return " ".join(words[at] for at in sorted(kept))


def scored(tools: Any, items: list[dict[str, Any]], mode: str, ask: Any) -> dict[str, float]:
    """Mean metrics (and ms per search) of `ask(item)`'s arguments for `tools.search` over the set."""
    totals: Counter[str] = Counter()
    seconds = 0.0
    for item in items:
        started = time.perf_counter()
        reply = tools.search(mode=mode, limit=evaluate.K, **ask(item))
        seconds += time.perf_counter() - started
        totals.update(evaluate.score([hit["source"] for hit in reply["hits"]], item["relevant"]))
    return {**{name: total / len(items) for name, total in totals.items()}, "ms": 1000 * seconds / len(items)}


Asked = dict[str, Any]  # a row's label -> the `tools.search` arguments for an item


def _rows(a: str, b: str) -> Asked:
    return {
        f"A: {a}": lambda item: {"query": item["query"]},
        "A through `queries`, alone": lambda item: {"queries": [item["query"]]},
        f"B: {b}": lambda item: {"query": item["keywords"]},
        "A and B fused (`queries`)": lambda item: {"queries": [item["query"], item["keywords"]]},
    }


def derived(spec: dict[str, Any], counts: Counter[str]) -> tuple[list[dict[str, Any]], Asked]:
    """A set of questions with B derived by the keyword rule, and the control B' (every content word)."""
    items = [
        {**item, "keywords": keywords(item["query"], counts), "words": keywords(item["query"], counts, None)}
        for item in spec["queries"]
    ]
    asked = _rows("the question", "its keywords") | {
        "B': every content word (control)": lambda item: {"query": item["words"]},
        "A and B' fused": lambda item: {"queries": [item["query"], item["words"]]},
    }
    return items, asked


def paired(titles: dict[str, Any], bodies: dict[str, Any]) -> tuple[list[dict[str, Any]], Asked]:
    """The sections both sets ask for, with the same relevant page: A the title, B the paragraph's words."""
    words = {item["section"]: item for item in bodies["queries"]}
    items = [
        {**item, "keywords": words[item["section"]]["query"]}
        for item in titles["queries"]
        if item["section"] in words and words[item["section"]]["relevant"] == item["relevant"]
    ]
    return items, _rows("the section's title", "words of its first paragraph")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sets", default="postgresql,debref-ja,debref-zh", help="postgresql (questions), debref-ja, debref-zh (paired)"
    )
    parser.add_argument("--reuse-index", action="store_true", help="search the tables a previous run built")
    args = parser.parse_args()
    references = [sets.debref.DOCS / f"ch01.{language}.html" for language in ("ja", "zh-cn")]
    common.installed(common.POSTGRES_MANUAL, *references, sets.debref.JIEBA_DICT)
    from lancelot_schema import logs
    from lancelot_schema.settings import resolve
    from lancelot_server.storage.store import Store
    from lancelot_server.tools import Tools

    logs.configure("WARNING")
    command = "python -m bench.quality.phrasings " + " ".join(sys.argv[1:])
    rows = [common.table_head(["set", "phrasing", "hit@10", "MRR@10", "nDCG@10", "ms/search"])]
    names = args.sets.split(",")
    loaded = sets.load([*names, *(PAIRED[name] for name in names if name in PAIRED)], WORK, sets.SIZE, sets.SEED)
    for name in names:
        spec = loaded[name]
        db = WORK / "db" / spec["package"]
        if not (args.reuse_index and (db / "documents.lance").exists()):
            shutil.rmtree(db, ignore_errors=True)  # a whole build, not an incremental one
            options = [arg for glob in spec["exclude"] for arg in ("--exclude", glob)]
            options += ["--language", spec["language"]] if spec.get("language") else []
            took, _ = common.index(spec["docs"], db, "--quiet", *options)
            print(f"indexed {spec['package']} {' '.join(options)} in {took:.0f} s".replace("  ", " "))
        if name in PAIRED:
            items, asked = paired(spec, loaded[PAIRED[name]])
        else:
            items, asked = derived(spec, passage_counts(db))
        for item in items[:: max(1, len(items) // 6)]:
            print(f"  {name}: A {item['query']!r} -> B {item['keywords']!r}")
        settings = resolve({"LANCEDB_PATH": str(db)})
        tools = Tools(Store(settings.db_path), settings)
        try:
            for row, (label, ask) in enumerate(asked.items()):
                r = scored(tools, items, "text", ask)
                cells = [f"{name} ({len(items)})" if row == 0 else "", label]
                cells += [f"{r[key]:.3f}" for key in ("hit@10", "mrr@10", "ndcg@10")] + [f"{r['ms']:.0f}"]
                rows.append(common.table_row(cells))
        finally:
            tools.close()
    print(f"\nCommand: `{command}`; load average {common.load_average(3)}\n")
    print("\n".join(rows))


if __name__ == "__main__":
    sys.exit(main())
