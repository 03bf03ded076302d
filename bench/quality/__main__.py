"""Retrieval quality before and after, in one run: hit@10, MRR@10, nDCG@10 and recall@10 per set and mode.

Run by `scripts/bench-quality` (`python -m bench.quality`), in the project's venv. The labelled sets are described
in `sets.py`:
our 60 PostgreSQL questions, queries built from the general index of Python's manual, and queries in
Japanese and Chinese from Debian's reference manual, which a side indexes with `--language cjk` when
its `lancelot-index` has that option.
Two sides: the baseline (a worktree of `--baseline` with its own venv, `baseline.py`) and the current
code (the working tree and .venv, or a worktree of `--current`). Each side indexes each corpus with its
own `lancelot-index` and answers every query with its own server code (`evaluate.py`, run by that side's
python). Text search needs no model; vector and hybrid bring up the real model (`model.py`) and index
with `--embed`. `--variant FLAGS` adds a side: the current code indexing with FLAGS in place of the set's
--exclude patterns (`--variant=--keep-generated`: the generated pages of documentation builds kept), so that
two ways of indexing are compared with the same code, in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from contextlib import ExitStack
from functools import cache
from pathlib import Path
from typing import Any

from bench import common
from bench.quality import baseline, model, sets

HERE = Path(__file__).resolve().parent
MODES = ("text", "vector", "hybrid")
METRICS = ("hit@10", "mrr@10", "ndcg@10", "recall@10")


def _env(url: str | None) -> dict[str, str]:
    """The environment without any Lancelot or OpenAI setting of the caller's, plus the model's."""
    return common.settings_free_env(
        EMBEDDING_MODEL=model.MODEL, OPENAI_API_KEY="unused", **({"OPENAI_BASE_URL": url} if url else {})
    )


@cache
def _has_language_option(bin_folder: Path) -> bool:
    done = subprocess.run([str(bin_folder / "lancelot-index"), "--help"], capture_output=True, text=True, check=True)
    return "--language" in done.stdout


def flags(side: baseline.Side, spec: dict[str, Any], url: str | None) -> list[str]:
    """`--embed` for vectors; `--language` when the set declares one (the CJK sets) and the side's indexer
    takes it (the baseline's does not, and indexes every corpus as it always did)."""
    language = ["--language", spec["language"]] if spec.get("language") and _has_language_option(side.bin) else []
    embed = ["--embed", f"local:{side.local}"] if side.local else ["--embed"]
    return [*(embed if url else []), *language]


def index(side: baseline.Side, spec: dict[str, Any], db: Path, url: str | None, reuse: bool) -> float:
    """Index the set's corpus with the side's own lancelot-index (`--embed` when `url`); seconds taken.
    With the model's cache warm this is not an indexing speed: compare speeds with scripts/bench-index."""
    stamp = db.parent / f"{db.name}.stamp.json"
    language = flags(side, spec, None)
    if reuse and stamp.exists():
        known = json.loads(stamp.read_text(encoding="utf-8"))
        if (known["embed"] or not url) and known.get("language", []) == language:
            print(f"  reusing {db} (built at {known['commit']})")
            return float(known["seconds"])
    shutil.rmtree(db, ignore_errors=True)
    excludes = [arg for glob in spec["exclude"] for arg in ("--exclude", glob)] if side.flags is None else side.flags
    options = ["--quiet", *excludes, *flags(side, spec, url)]
    seconds, _ = common.index(spec["docs"], db, *options, env=_env(url), indexer=side.bin / "lancelot-index")
    known = {"embed": bool(url), "language": language, "seconds": seconds, "commit": side.commit}
    stamp.write_text(json.dumps(known), encoding="utf-8")
    return seconds


def evaluate(side: baseline.Side, name: str, spec: dict[str, Any], db: Path, modes: list[str], url: str | None) -> Any:
    """The set's metrics per mode, computed by `evaluate.py` under the side's own python and code."""
    out = db.parent / f"{name}.scores.json"
    command = [str(side.bin / "python"), str(HERE / "evaluate.py"), "--db", str(db), "--queries", spec["file"]]
    command += ["--modes", ",".join(modes), "--model", model.MODEL, "--out", str(out)]
    command += ["--url", url] if url else []
    command += ["--local-model", side.local] if side.local else []
    done = subprocess.run(command, env=_env(url), cwd=side.tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{side.name}: evaluation failed ({done.returncode}):\n{done.stderr}")
    return json.loads(out.read_text(encoding="utf-8"))


def facts(sides: list[baseline.Side]) -> list[str]:
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "?")
    versions = []
    for side in sides:
        probe = [str(side.bin / "python"), "-c", "import lancedb; print(lancedb.__version__)"]
        lancedb = subprocess.run(probe, capture_output=True, text=True, check=False).stdout.strip()
        versions.append(f"{side.name}: lancedb {lancedb}")
    return [
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, load average {common.load_average(3)}",
        "; ".join(versions),
    ]


def table(chosen: dict[str, dict[str, Any]], scores: dict[tuple[str, str], Any], sides: list[baseline.Side]) -> str:
    headers = ["set", "search", "code", "hit@10", "MRR@10", "nDCG@10", "recall@10", "fell back", "ms/query"]
    rows = [common.table_head(headers)]
    for name, spec in chosen.items():
        for m, mode in enumerate(scores[(sides[0].name, name)]):
            for i, side in enumerate(sides):
                r = scores[(side.name, name)][mode]
                label = f"{name} ({len(spec['queries'])})" if m == 0 and i == 0 else ""
                code = side.name if side.commit in side.name else f"{side.name} {side.commit}"
                cells = [label, mode if i == 0 else "", code, *(f"{r[k]:.3f}" for k in METRICS)]
                cells += [str(r["fallbacks"]), f"{r['ms_per_query']:.0f}"]
                rows.append(common.table_row(cells))
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-quality", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated; `text` alone needs no model")
    parser.add_argument("--sets", default=",".join(sets.NAMES), help="comma-separated: " + ", ".join(sets.NAMES))
    parser.add_argument("--baseline", default="888f04f", help="git revision to compare with, or `none`")
    parser.add_argument(
        "--current", help="git revision to measure as current (a clean worktree), instead of the working tree"
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="FLAGS",
        help="also index with the current code and these lancelot-index flags in place of the set's --exclude "
        "patterns (repeatable; '' for none)",
    )
    parser.add_argument(
        "--local",
        action="store_true",
        help="also the current code with --embed local (all-MiniLM-L6-v2 int8, the tests' model folder) beside "
        "the same model served through the endpoint",
    )
    parser.add_argument(
        "--local-model",
        action="append",
        default=[],
        metavar="FOLDER",
        help="also the current code with --embed local:FOLDER, a model folder (scripts/model-folder); repeatable",
    )
    parser.add_argument(
        "--local-only",
        action="store_true",
        help="only the local sides (--local, --local-model): no endpoint model, no torch venv",
    )
    parser.add_argument("--size", type=int, default=sets.SIZE, help="queries sampled from the Python index")
    parser.add_argument("--seed", type=int, default=sets.SEED, help="seed of that sample")
    parser.add_argument("--work", default=str(common.WORK / "quality"))
    parser.add_argument("--check-only", action="store_true", help="only check that the model serves sensible vectors")
    parser.add_argument("--reuse-index", action="store_true", help="score the databases a previous run built")
    args = parser.parse_args()
    references = [sets.debref.DOCS / f"ch01.{language}.html" for language in ("ja", "zh-cn")]
    common.installed(common.POSTGRES_MANUAL, common.PYTHON_MANUAL, *references, sets.debref.JIEBA_DICT)
    command = "scripts/bench-quality " + " ".join(sys.argv[1:])
    modes = [mode for mode in args.modes.split(",") if mode]
    if not modes or set(modes) - set(MODES):
        raise SystemExit(f"--modes takes text, vector, hybrid; got {args.modes!r}")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with ExitStack() as stack:
        url, check = None, None
        if args.local_only and not (args.local or args.local_model):
            raise SystemExit("--local-only needs --local or --local-model FOLDER")
        if args.local_only and set(modes) - {"text"}:
            url = model.NOWHERE  # the sides embed with their own model: nothing serves this
        elif args.check_only or set(modes) - {"text"}:
            python = model.ensure_venv(work / "venv")
            url = stack.enter_context(model.endpoint(python, work / "embeddings.sqlite"))
            check = model.check(url)
            if args.check_only:
                return
        chosen = sets.load(args.sets.split(","), work, args.size, args.seed)
        sides = [] if args.baseline == "none" else [baseline.prepare(args.baseline, work)]
        sides.append(baseline.prepare(args.current, work, "current") if args.current else baseline.current())
        sides += [baseline.variant(sides[-1], flags) for flags in args.variant]
        if args.local:
            from tests.support.local_model import make_model_folder

            sides.append(baseline.local(sides[len(sides) - 1 - len(args.variant)], make_model_folder(work / "model")))
        code = sides[len(sides) - 1 - len(args.variant) - int(args.local)]
        sides += [baseline.local(code, Path(folder).resolve(), named=True) for folder in args.local_model]
        if args.local_only:
            sides = [side for side in sides if side.local]
        scores, seconds = {}, {}
        for side in sides:
            dbs: dict[str, Path] = {}  # the Python sets share one corpus: index it once per side
            for name, spec in chosen.items():
                db = work / "db" / re.sub(r"[^\w.=+-]+", "-", side.name) / spec["package"]
                if spec["package"] not in dbs:
                    db.parent.mkdir(parents=True, exist_ok=True)
                    seconds[(side.name, spec["package"])] = took = index(side, spec, db, url, args.reuse_index)
                    how = "".join(f" {flag}" for flag in flags(side, spec, url))
                    print(f"{side.name}: indexed {spec['package']}{how} in {took:.0f} s")
                    dbs[spec["package"]] = db
                scores[(side.name, name)] = evaluate(side, name, spec, db, modes, url)
        sides = [baseline.recheck(side) for side in sides]
    print(f"\nCommand: `{command}` ({time.perf_counter() - started:.0f} s); top 10 hits scored by page")
    for line in facts(sides):
        print(line)
    print()
    print(table(chosen, scores, sides))
    out = work / "results.json"
    payload = {
        "command": command,
        "model_check": check,
        "sides": [vars(side) | {"tree": str(side.tree), "bin": str(side.bin)} for side in sides],
        "index_seconds": {f"{s} / {n}": v for (s, n), v in seconds.items()},
        "scores": {f"{s} / {n}": v for (s, n), v in scores.items()},
    }
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"\n(also in {out})")


if __name__ == "__main__":
    sys.exit(main())
