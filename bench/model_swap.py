"""Two files of one local model, stamped alike: may a table embedded with one be searched with the other?

    .venv/bin/python -m bench.model_swap OLD_FOLDER NEW_FOLDER [--passages 400]   # scripts/model-folder's folders

The PostgreSQL labelled set (Debian's postgresql-doc-15, bench-quality's 60 questions) is indexed once with
each folder (`--embed local:FOLDER`), then each table is scored, vector and hybrid, with its queries embedded
by each folder's model, as the server does when LANCELOT_EMBED_MODEL_PATH names it (bench/quality/evaluate.py):
the four pairs show what querying across the files costs. Also the cosine of the two files' vectors of the
same texts: the 60 questions and the table's first `--passages` passages. Prints Markdown for
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

from bench import common
from bench.quality import sets

WORK = common.WORK / "model-swap"
MODES = ("vector", "hybrid")


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _index(folder: Path, db: Path) -> str:
    """The table of `folder`'s vectors, made unless a run before made it; what its making took."""
    done = db.parent / f"{db.name}.made"
    if not done.exists():
        cpu = _cpu_of_children()
        seconds, _ = common.index(common.POSTGRES_MANUAL, db, "--quiet", "--embed", f"local:{folder}", env=_env())
        done.write_text(f"{seconds:.0f} s, {_cpu_of_children() - cpu:.0f} s of CPU", encoding="utf-8")
    return done.read_text(encoding="utf-8")


def _env() -> dict[str, str]:
    return common.settings_free_env(XDG_CACHE_HOME=str(WORK / "cache"))


def _scores(db: Path, folder: Path) -> dict[str, dict[str, float]]:
    out = WORK / "scores.json"
    command = [str(common.BIN / "python"), str(sets.HERE / "evaluate.py"), "--db", str(db), "--out", str(out)]
    command += ["--queries", str(sets.HERE / "queries.json"), "--modes", ",".join(MODES), "--local-model", str(folder)]
    subprocess.run(command, env=_env(), cwd=common.ROOT, check=True)
    return json.loads(out.read_text(encoding="utf-8"))


def _cosines(old: Path, new: Path, texts: list[str]) -> tuple[float, float]:
    """The median and least cosine of the two files' vectors of each text."""
    import numpy as np

    from lancelot_indexer.embedding.local import LocalModel
    from lancelot_schema.local_models import Where

    def vectors(folder: Path) -> np.ndarray:
        made = LocalModel.load(str(folder), Where(), threads=1, say=print).embed(texts)
        return np.frombuffer(made.flat, dtype=np.float32).reshape(len(texts), made.width)

    cosines = (vectors(old) * vectors(new)).sum(axis=1)
    return float(np.median(cosines)), float(cosines.min())


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.model_swap", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--passages", type=int, default=400, help="passages whose two vectors are compared")
    args = parser.parse_args()
    import lance

    common.installed(common.POSTGRES_MANUAL)
    folders = {"old": args.old.resolve(), "new": args.new.resolve()}
    loads = [common.load_average(3)]
    made = {side: _index(folder, WORK / f"db-{side}") for side, folder in folders.items()}
    table = lance.dataset(str(WORK / "db-old" / "documents.lance"))
    passages = table.to_table(columns=["text"], limit=args.passages).column("text").to_pylist()
    questions = [item["query"] for item in json.loads((sets.HERE / "queries.json").read_text())["queries"]]
    cosines = {"questions": _cosines(folders["old"], folders["new"], questions)}
    cosines["passages"] = _cosines(folders["old"], folders["new"], passages)
    print(f"Load {' / '.join(loads)} at the start, {common.load_average(3)} at the end; 2 cores.\n")
    for side, folder in folders.items():
        print(f"- {side}: {folder.name} ({folder}); indexing took {made[side]}")
    for what, (median, least) in cosines.items():
        print(f"- cosine of the two files' vectors, {what}: median {median:.4f}, least {least:.4f}")
    headers = ["table embedded by", "queries embedded by", "search", "hit@10", "MRR@10", "nDCG@10"]
    print("\n" + common.table_head(headers))
    for table_side in folders:
        for query_side, folder in folders.items():
            scores = _scores(WORK / f"db-{table_side}", folder)
            for mode in MODES:
                got = scores[mode]
                cells = [table_side, query_side, mode, *(f"{got[m]:.3f}" for m in ("hit@10", "mrr@10", "ndcg@10"))]
                print(common.table_row(cells))


if __name__ == "__main__":
    sys.exit(main())
