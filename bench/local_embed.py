"""`--embed local` beside the endpoint in one run: passages per second, and the server's query latency.

Called by `bench.embed` (scripts/bench-embed) with its endpoint. Over one generated folder of `chunks` passages
(bench.embed's, about 900 characters each), interleaved:

* `lancelot-index --embed` against the endpoint (its configured latency a request) and `--embed local:FOLDER`
  with the default all-MiniLM-L6-v2 (int8 per channel, built once by scripts/model-folder) on every core;
  passages per second from each run's logged embedding stage;
* the server's query embedding: `LocalEmbedder.embed_all([query])` (the model loaded beforehand, one thread,
  as the server runs it) and the endpoint `Embedder.embed_all([query])`, over the same queries, alternated;
  median and p95. The target: the local median at most 15 ms on two cores.
"""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bench import common
from lancelot_schema.local_models import DEFAULT_MODEL

QUERIES = [
    "how do I reclaim space after many deletes",
    "what makes a replica fall behind",
    "which lock does a schema change take",
    "why is my join slow",
    "restore a backup to another server",
]
TARGET_MS = 15.0


@dataclass(frozen=True)
class Side:
    seconds: float
    stage: float
    passages_per_s: float
    cpu: float  # the indexer's CPU seconds, its worker processes included


def index_once(docs: Path, db: Path, chunks: int, env: dict[str, str], *options: str) -> Side:
    """One `lancelot-index` run into a fresh `db`, its embedding stage read from the log."""
    shutil.rmtree(db, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, done = common.index(docs, db, "--log-level", "info", *options, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    logged = re.search(r"\] embedded .*seconds=([0-9.]+)", done.stderr)
    if logged is None:
        raise SystemExit(f"no embedding stage logged:\n{done.stderr}")
    stage = float(logged.group(1))
    return Side(seconds, stage, chunks / stage, cpu)


def query_latency(url: str, model: str, folder: Path, rounds: int) -> dict[str, dict[str, float]]:
    """Seconds per query embedding, local against the endpoint, as the server does it."""
    from lancelot_schema.settings import resolve
    from lancelot_server.search.embed import Embedder
    from lancelot_server.search.local_embed import LocalEmbedder

    settings = resolve(
        {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-test", "EMBEDDING_MODEL": model, **_model_path(folder)}
    )
    local, endpoint = LocalEmbedder(folder.name, settings), Embedder(settings)
    local.embed_all(["warm up"])
    endpoint.embed_all(["warm up"])
    samples: dict[str, list[float]] = {"local": [], "endpoint": [], "local CPU": []}
    for number in range(rounds):
        query = f"{QUERIES[number % len(QUERIES)]} {number}"  # no answer is cached
        for name, embedder in (("local", local), ("endpoint", endpoint))[:: 1 if number % 2 == 0 else -1]:
            started, cpu = time.perf_counter(), time.thread_time()
            embedder.embed_all([query])
            samples[name].append(time.perf_counter() - started)
            if name == "local":  # one intra-op thread: the model runs on this thread, whatever the load
                samples["local CPU"].append(time.thread_time() - cpu)
    endpoint.close()
    return {name: common.summary(values) for name, values in samples.items()}


def index_without_vectors(docs: Path, db: Path, env: dict[str, str]) -> float:
    """The CPU seconds of `lancelot-index` over `docs` without --embed: reading, chunking, writing, indexes."""
    shutil.rmtree(db, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    common.index(docs, db, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def local_latency(folder: Path, name: str, rounds: int) -> dict[str, float]:
    """Milliseconds per query embedding by the model in `folder` (stamped `name`), as the server does it: median,
    p95, and the median CPU on the query's thread."""
    from lancelot_schema.settings import resolve
    from lancelot_server.search.local_embed import LocalEmbedder

    local = LocalEmbedder(name, resolve(_model_path(folder)))
    local.embed_all(["warm up"])
    wall, cpu = [], []
    for number in range(rounds):
        query = f"{QUERIES[number % len(QUERIES)]} {number}"  # no answer is cached
        started, used = time.perf_counter(), time.thread_time()
        local.embed_all([query])
        wall.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - used)  # one intra-op thread: what the query costs on an idle core
    return {**common.summary(wall), "cpu": common.summary(cpu)["median"]}


def _model_path(folder: Path) -> dict[str, str]:
    return {"LANCELOT_EMBED_MODEL_PATH": str(folder)}


def default_folder(work: Path) -> Path:
    """The default model's folder, the files the download brings (scripts/model-folder's default), made once."""
    folder = work / "models" / "default" / DEFAULT_MODEL
    if not (folder / "model.onnx").is_file():
        subprocess.run([str(common.ROOT / "scripts" / "model-folder"), str(folder)], check=True)
    return folder


def run(docs: Path, chunks: int, work: Path, endpoint_env: dict[str, str], repeat: int, rounds: int) -> None:
    """Print the local section of docs/benchmarks.md's embedding benchmark."""
    folder = default_folder(work)
    local_env = common.settings_free_env(XDG_CACHE_HOME=str(work / "cache"))
    sides: dict[str, list[Side]] = {"endpoint": [], "local": []}
    loads = []
    for number in range(repeat):
        loads.append(common.load_average())
        order = [("endpoint", endpoint_env, ("--embed",)), ("local", local_env, ("--embed", f"local:{folder}"))]
        for name, env, options in order[:: 1 if number % 2 == 0 else -1]:
            sides[name].append(index_once(docs, work / f"db-{name}", chunks, env, *options))
    best = {name: min(runs, key=lambda side: side.stage) for name, runs in sides.items()}
    latency = query_latency(endpoint_env["OPENAI_BASE_URL"], endpoint_env["EMBEDDING_MODEL"], folder, rounds)
    loads.append(common.load_average())
    print(f"\n### `--embed local` beside the endpoint ({chunks} passages, load {min(loads)}–{max(loads)})\n")
    headers = ["side", "wall time", "embedding stage", "passages/s", "indexer CPU", "query median", "query p95"]
    print(common.table_head(headers))
    labels = {"endpoint": "endpoint (`--embed`)", "local": "local all-MiniLM-L6-v2 int8 per channel (`--embed local`)"}
    for name, label in labels.items():
        side, query = best[name], latency[name]
        cells = [f"{side.seconds:.1f} s", f"{side.stage:.1f} s", f"{side.passages_per_s:.1f}", f"{side.cpu:.1f} s"]
        print(common.table_row([label, *cells, f"{query['median']:.1f} ms", f"{query['p95']:.1f} ms"]))
    ratio = best["endpoint"].passages_per_s / best["local"].passages_per_s
    median, cpu = latency["local"]["median"], latency["local CPU"]["median"]
    per_cpu = chunks / (best["local"].cpu - best["endpoint"].cpu)
    print(
        f"\nLocal against endpoint: {ratio:.1f}× fewer passages a second; the model's own cost, the local run's CPU "
        f"less the endpoint run's: {per_cpu:.1f} passages per CPU second (two idle cores give about twice that "
        f"a second). Local query median {median:.1f} ms "
        f"({'met' if median <= TARGET_MS else 'NOT met'} against the {TARGET_MS:g} ms target), of which "
        f"{cpu:.1f} ms of CPU on the query's thread (p95 {latency['local CPU']['p95']:.1f} ms): what it takes on an "
        f"idle core. {rounds} queries each, alternated; fastest of {repeat} interleaved index runs each."
    )
