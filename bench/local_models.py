"""Candidate local models side by side: size on disk, load time, passages per second, query latency.

    scripts/bench-models FOLDER...        # model folders made by scripts/model-folder

For each folder, in one run over one generated folder of `--passages` passages (bench.embed's, about 900
characters each), the models taking turns so that drift in the machine's load is shared:

* size: the folder's files; load: `LocalModel.load` (onnxruntime imported beforehand), median of 3;
* passages per second: `lancelot-index --embed local:FOLDER` on every core, from the logged embedding stage,
  fastest of `--repeat` runs; per CPU second: its CPU less that of the same build without `--embed`;
* query latency: the server's `LocalEmbedder.embed_all([query])`, one thread as the server runs it, median
  and p95 over `--queries` queries (the model loaded beforehand).

Quality is measured by scripts/bench-quality --local-model FOLDER. Prints a Markdown section for
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from bench import common, embed, local_embed

WORK = common.WORK / "local-models"


def _size(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.iterdir() if path.is_file()) / 1e6


def _load_seconds(folder: Path) -> float:
    import onnxruntime  # noqa: F401 - imported before timing: the load of the model alone is timed

    from lancelot_indexer.embedding.local import LocalModel
    from lancelot_schema.local_models import Where

    times = [common.timed(lambda: LocalModel.load(str(folder), Where(), threads=2, say=print)) for _ in range(3)]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-models", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path, help="model folders (scripts/model-folder)")
    parser.add_argument("--passages", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=2, help="index runs of each model; the fastest counts")
    parser.add_argument("--queries", type=int, default=200, help="query embeddings timed for each model")
    args = parser.parse_args()
    from lancelot_schema.local_models import read_folder

    folders = [folder.resolve() for folder in args.folders]
    specs = {folder: read_folder(folder, "a model folder").spec for folder in folders}
    docs = WORK / "docs"
    embed.make_docs(docs, args.passages)
    env = common.settings_free_env(XDG_CACHE_HOME=str(WORK / "cache"))
    loads = [common.load_average()]
    runs: dict[Path, list[local_embed.Side]] = {folder: [] for folder in folders}
    reference = []  # the same build without vectors: what is not the model's CPU
    for number in range(args.repeat):
        reference.append(local_embed.index_without_vectors(docs, WORK / "db", env))
        for folder in folders[:: 1 if number % 2 == 0 else -1]:
            runs[folder].append(
                local_embed.index_once(docs, WORK / "db", args.passages, env, "--embed", f"local:{folder}")
            )
    loads.append(common.load_average())
    started = time.perf_counter()
    print(f"## Local model candidates: `scripts/bench-models` ({args.passages} passages)\n")
    shown = " ".join(str(f.relative_to(common.ROOT)) if f.is_relative_to(common.ROOT) else str(f) for f in folders)
    print(
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, load {min(loads)}–{max(loads)}. "
        f"Command: `scripts/bench-models {shown}`.\n"
    )
    headers = ["folder", "stamped", "files", "load", "passages/s", "per CPU second", "query median", "p95", "query CPU"]
    print(common.table_head(headers))
    base = min(reference)
    for folder in folders:
        best = min(runs[folder], key=lambda side: side.stage)
        latency = local_embed.local_latency(folder, specs[folder].name, args.queries)
        cells = [
            folder.name,
            f"`local:{specs[folder].name}`",
            f"{_size(folder):.1f} MB",
            f"{_load_seconds(folder):.2f} s",
        ]
        cells += [
            f"{best.passages_per_s:.1f}",
            f"{args.passages / (best.cpu - base):.1f}",
            f"{latency['median']:.1f} ms",
        ]
        cells += [f"{latency['p95']:.1f} ms", f"{latency['cpu']:.1f} ms"]
        print(common.table_row(cells))
    print(
        f"\nFastest of {args.repeat} interleaved index runs each (all cores); per CPU second: passages over the "
        f"indexer's CPU (its workers included) less that of the same build without vectors ({base:.1f} s), what an "
        f"idle core gives. {args.queries} queries each on one thread; "
        f"query CPU: the median CPU time on that thread. Loads and queries took {time.perf_counter() - started:.0f} s."
    )


if __name__ == "__main__":
    sys.exit(main())
