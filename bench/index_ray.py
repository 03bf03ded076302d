"""`scripts/bench-index ROUNDS ray-fts`: lance-ray's distributed full-text index build against Lance's one-core
build, on the table of a 100,000-passage folder (copies of the PostgreSQL manual, as `ray` indexes).

The table is built once by `lancelot-index --no-fts`; then, round by round and alternating, the `text` column's
INVERTED index is built with the indexer's own tokenizer settings by `LanceDataset.create_scalar_index` (what
`writing/indexes.py` calls) and by `lance_ray.create_scalar_index` with one worker a core of a local Ray (started
once, before the rounds, and not counted). Both indexes must answer the same BM25 queries with the same rows.
lance-ray lives in a throwaway venv (bench-work/index/lance-ray, with the project's own packages), never in
Lancelot's dependencies.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import common

WORK = common.WORK / "index"
PASSAGES = 100_000
SIZES = (25_000, PASSAGES)  # passages: a few manuals, and the size
VENV = WORK / "lance-ray"

# Run by the throwaway venv: ROUNDS alternations of the two builds over the table at argv[1].
MEASURE = r"""
import json, sys, time
import lance, lance_ray, ray
from lancelot_schema import languages, layout
uri, rounds, workers, fragments = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if fragments > 1:  # the same rows in as many fragments: lance-ray gives each worker a share of them
    rows = lance.dataset(uri).to_table()
    uri = uri.removesuffix(".lance") + f"-{fragments}.lance"
    lance.write_dataset(rows, uri, mode="overwrite", max_rows_per_file=-(-rows.num_rows // fragments))
params = dict(languages.FTS_PARAMS[languages.DEFAULT])
queries = ["vacuum full", "foreign key constraint", "wal archive recovery", "index only scan"]

def hits(dataset):
    # Scores and texts, not row ids: the copies of the manual tie, and ties may come in any order.
    found = [dataset.to_table(full_text_query={"columns": ["text"], "query": q}, columns=["text"], limit=10)
             .to_pylist() for q in queries]
    return [sorted((round(hit["_score"], 3), hit["text"]) for hit in hits) for hits in found]

started = time.perf_counter()
ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
ray_start = time.perf_counter() - started
one, spread, answers = [], [], {}
for _ in range(rounds):
    dataset = lance.dataset(uri)
    started = time.perf_counter()
    dataset.create_scalar_index("text", "INVERTED", name="text_idx", replace=True, **params)
    one.append(time.perf_counter() - started)
    answers["one"] = hits(lance.dataset(uri))
    started = time.perf_counter()
    lance_ray.create_scalar_index(uri, column="text", index_type="INVERTED", name="text_idx", replace=True,
                                  num_workers=workers, **params)
    spread.append(time.perf_counter() - started)
    answers["spread"] = hits(lance.dataset(uri))
ray.shutdown()
table = lance.dataset(uri)
print(json.dumps({"one": one, "spread": spread, "same": answers["one"] == answers["spread"], "ray_start": ray_start,
                  "rows": table.count_rows(), "fragments": len(table.get_fragments()), "lance": lance.__version__,
                  "ray": ray.__version__}))
"""


def venv() -> str:
    """The throwaway venv's python: the project's packages (its pylance and Ray) plus lance-ray."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(VENV)], check=True)
        # The project's own environment underneath, lance-ray (and pandas, its need) on top of it.
        site = subprocess.run(
            [str(common.BIN / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        # addsitedir, not a bare path: the project's own .pth files (its editable members) are read too.
        line = f"import site; site.addsitedir({site!r})\n"
        (Path(purelib) / "lancelot-project.pth").write_text(line, encoding="utf-8")
        uv = common.ROOT / ".tools" / "bin" / "uv"
        # Without its dependencies: Ray, pylance and pyarrow are the project's; pandas and fsspec are not.
        needs = ["lance-ray==0.5.0", "pandas", "fsspec", "python-dateutil", "six", "tzdata"]
        subprocess.run([str(uv), "pip", "install", "--no-deps", "--python", str(python), *needs], check=True)
    return str(python)


def fts(rounds: int) -> None:
    """At each size, on the table as the indexer writes it (one fragment), then on its rows in a fragment a
    worker (what lance-ray divides among its workers)."""
    workers = os.cpu_count() or 1
    for passages in SIZES:
        docs = common.copies_for(passages, {"": common.POSTGRES_MANUAL}, WORK / f"ray-fts-docs-{passages}")
        db = WORK / "ray-fts-db"
        shutil.rmtree(db, ignore_errors=True)
        common.index(docs, db, "--quiet", "--no-fts")
        for fragments in (1, workers):
            _fts(db, rounds, workers, fragments)


def _fts(db: Path, rounds: int, workers: int, fragments: int) -> None:
    done = subprocess.run(
        [venv(), "-c", MEASURE, str(db / "documents.lance"), str(rounds), str(workers), str(fragments)],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        print(f"lance-ray's build failed here:\n{done.stderr[-3000:]}")
        return
    result = json.loads(done.stdout.splitlines()[-1])
    one, spread = min(result["one"]), min(result["spread"])
    print(
        f"INVERTED index on text, {result['rows']:,} rows in {result['fragments']} fragments; pylance "
        f"{result['lance']}, Ray {result['ray']}, load {common.load_average(3)}"
    )
    print(f"Lance's one-core build (create_scalar_index): {one:.2f} s ({result['one']})")
    ratio = spread / one
    print(f"lance_ray.create_scalar_index, {workers} workers: {spread:.2f} s, {ratio:.2f}x ({result['spread']})")
    print(f"same BM25 answers: {result['same']}; a local Ray's start, not counted: {result['ray_start']:.2f} s")


# `ray-parts`: each part of a --ray run alone, in this process, over the same 100,000-passage folder.


class _Replay:
    """An engine that hands the reader outcomes made before: what the driver's share of reading costs."""

    def __init__(self, outcomes: list[Any]) -> None:
        self._outcomes = outcomes

    def outcomes(self, read: Any, found: Any) -> Any:
        return iter(self._outcomes)

    def map(self, function: Any, items: Any, in_flight: int) -> Any:
        return map(function, items)


EMBED_TEXTS = 20_000  # the first distinct passages embedded: the endpoint's time grows with their number
EMBED_LATENCY_MS = 100  # an answer's wait, a remote endpoint's order of magnitude


def ray_parts(rounds: int) -> None:
    """Read (one core, then Ray tasks), embed (here, then in Ray tasks), write and index, each timed alone: what
    scales with workers and what stays on the driver. `rounds` is ignored: one pass of each."""
    import time

    import lance
    import pyarrow as pa
    import ray

    from bench import embed as bench_embed
    from lancelot_indexer.documents import ray_tasks
    from lancelot_indexer.documents.collect import Engine, Reader, read_document, walked
    from lancelot_indexer.embedding.embed import embed_texts
    from lancelot_indexer.embedding.tasks import embed_in_tasks
    from lancelot_indexer.writing import indexes
    from lancelot_indexer.writing.write import rows_table
    from lancelot_schema import languages, layout

    docs = common.copies_for(PASSAGES, {"": common.POSTGRES_MANUAL}, WORK / "ray-docs")
    found = walked(docs).found
    cpus = os.cpu_count() or 1
    started = time.perf_counter()
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    times = {"Ray's start (not paid on a running cluster)": time.perf_counter() - started}

    def read(engine: Engine | None) -> list[pa.Table]:
        with Reader(layout.DEFAULT_CHUNK_SIZE, len(found), workers=1, file_timeout=None, file_memory=None,
                    engine=engine) as reader:  # fmt: skip
            return [rows_table(columns) for columns in reader.batches(found)]

    with ray_tasks.Cluster(ray_tasks.LOCAL) as cluster:
        started = time.perf_counter()
        batches = read(None)
        times["read, one process"] = time.perf_counter() - started
        # What of that is the files' own (a task's work) and what the driver's: taking every outcome into columns,
        # and the outcomes' trip (pickled by the task, unpickled here; Ray's object store adds its copies).
        started = time.perf_counter()
        outcomes = [read_document(item, layout.DEFAULT_CHUNK_SIZE) for item in found]
        times["read: the files alone (a task's part)"] = time.perf_counter() - started
        started = time.perf_counter()
        read(_Replay(outcomes))
        times["read: the driver taking the outcomes in"] = time.perf_counter() - started
        started = time.perf_counter()
        pickle.loads(pickle.dumps(outcomes, protocol=5))
        times["read: the outcomes pickled and unpickled once"] = time.perf_counter() - started
        del outcomes
        started = time.perf_counter()
        read(cluster)
        times[f"read, Ray tasks on {cpus} CPUs"] = time.perf_counter() - started
        rows = sum(batch.num_rows for batch in batches)
        db = WORK / "ray-parts-db"
        shutil.rmtree(db, ignore_errors=True)
        started = time.perf_counter()
        dataset = lance.write_dataset(pa.concat_tables(batches), str(db / "documents.lance"))
        times["write (Lance, no index)"] = time.perf_counter() - started
        del batches
        params = languages.FTS_PARAMS[languages.DEFAULT]
        started = time.perf_counter()
        dataset.create_scalar_index(layout.TEXT, "NGRAM", name=indexes.NGRAM_INDEX)
        times["index: n-gram on text"] = time.perf_counter() - started
        started = time.perf_counter()
        for column in layout.FULL_TEXT_COLUMNS:
            dataset.create_scalar_index(column, "INVERTED", name=f"{column}_idx", **params)
        times["index: full text on text, title, heading"] = time.perf_counter() - started
        started = time.perf_counter()
        for column in layout.SCALAR_INDEXED_COLUMNS:
            dataset.create_scalar_index(column, "BTREE", name=f"{column}_idx")
        times["index: B-trees"] = time.perf_counter() - started
        texts = list(dict.fromkeys(dataset.to_table(columns=[layout.TEXT]).column(layout.TEXT).to_pylist()))
        texts = texts[:EMBED_TEXTS]
        with bench_embed.endpoint(EMBED_LATENCY_MS) as end:
            given = {"model": bench_embed.MODEL, "api_key": "sk-test", "base_url": f"{end.url}/v1"}
            started = time.perf_counter()
            here = embed_texts(texts, concurrency=4, **given)
            times[f"embed {len(texts):,} passages, here, 4 requests at once"] = time.perf_counter() - started
            for when in ("first: workers start and import the client", "again"):
                started = time.perf_counter()
                there = embed_in_tasks(cluster, texts, concurrency=4, **given)
                times[f"embed {len(texts):,} passages, Ray tasks, 4 at once ({when})"] = time.perf_counter() - started
        assert here.flat == there.flat
    ray.shutdown()
    print(f"The parts of a --ray run alone: {len(found):,} pages, {rows:,} passages, load {common.load_average(3)}")
    requests = f"{here.stats.requests} requests here, {there.stats.requests} in tasks"
    print(f"(embedding: {requests}; {EMBED_LATENCY_MS} ms an answer)")
    print("| part | seconds |\n|---|---|")
    for part, seconds in times.items():
        print(f"| {part} | {seconds:.2f} |")
