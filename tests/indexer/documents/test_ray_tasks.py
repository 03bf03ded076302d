"""--ray: documents read in Ray tasks give the table the local indexer gives, and a rebuild sends Ray only
the changed files. One real local Ray (2 CPUs) for the module: starting one costs seconds."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from functools import partial
from pathlib import Path

import lance
import pytest
import ray
from ray import cloudpickle
from tests.e2e.stdio_server import searches_during_rebuilds
from tests.indexer.conftest import PAUSED_BEFORE_COMMIT, kill_at_first_write, make_docs, write_big_text
from tests.server import corpus
from tests.support.documents import Line, make_pdf
from tests.support.s3_server import REGION

from lancelot_indexer.documents import ray_tasks
from lancelot_indexer.documents.collect import read_document, walked
from lancelot_indexer.documents.walk import Found
from lancelot_indexer.documents.workers import over_time
from lancelot_indexer.embedding import tasks
from lancelot_indexer.embedding.embed import Limits
from lancelot_indexer.embedding.vectors import VectorExtension
from lancelot_indexer.errors import EmbeddingKeyError
from lancelot_indexer.pipeline import Options, Report, build
from lancelot_schema import layout, storage
from lancelot_schema.settings import Storage

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent

pytestmark = [
    pytest.mark.xdist_group("ray"),
    # Ray's own: it starts its processes with fork+exec in a process that may hold Lance (nothing of Lance
    # runs in them), and its worker pool reports how it ends them.
    pytest.mark.filterwarnings("ignore:lance is not fork-safe:UserWarning"),
]

# The test's own task bodies (below) reach Ray's workers by value: they cannot import this module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module", autouse=True)
def local_ray(tmp_path_factory: pytest.TempPathFactory, s3_server):
    # Ray's sockets live under its temp folder and a socket's path is at most 107 bytes: a short folder.
    folder = tmp_path_factory.mktemp("ray")
    # The workers' own credentials, as a cluster's nodes have theirs: they read documents on the test's bucket.
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _temp_dir=str(folder),
        runtime_env={"env_vars": s3_server.env()},
    )
    yield
    ray.shutdown()


def folder(root: Path) -> Path:
    docs = make_docs(root)
    (docs / "manual.pdf").write_bytes(make_pdf([[Line("Gears mesh with sprockets.")], [Line("Chains wear.")]]))
    (docs / "cut.pdf").write_bytes(make_pdf([[Line("whole")]])[:300])  # damaged: skipped with its reason
    for number in range(40):  # more files than one task reads
        (docs / "pages" / f"page{number:02}.md").parent.mkdir(exist_ok=True)
        (docs / "pages" / f"page{number:02}.md").write_text(f"# Page {number}\n\nAbout cogs {number}.\n", "utf-8")
    return docs


# The files of `folder` that are skipped once read: each run reads them again, as a local run does.
UNUSABLE = ["binary.txt", "cut.pdf", "empty.md"]


def table(db: Path | storage.Location) -> tuple[list[dict], list[tuple], dict[bytes, bytes]]:
    """A table's rows by id, its indexes (name, columns, kind, rows, settings) and its stamps but the time it
    was built."""
    location = storage.locate(str(db)) if isinstance(db, Path) else db
    dataset = lance.dataset(location.table_uri("documents"), storage_options=dict(location.options))
    rows = sorted(dataset.to_table().to_pylist(), key=lambda row: row[layout.ID])
    indexes = sorted(
        (index.name, index.field_names, index.index_type, index.num_rows_indexed, str(index.details))
        for index in dataset.describe_indices()
    )
    stamps = dict(dataset.schema.metadata or {})
    stamps.pop(layout.META_INDEXED_AT.encode())
    return rows, indexes, stamps


def reasons(report: Report) -> list[tuple[str, str]]:
    return [(item.relative, item.reason) for item in report.skipped]


def test_the_table_built_on_ray_is_the_local_indexers_row_by_row_with_its_indexes_and_stamps(tmp_path):
    docs = folder(tmp_path / "docs")
    local = build(docs, tmp_path / "local", Options(workers=2))
    on_ray = build(docs, tmp_path / "ray", Options(ray=ray_tasks.LOCAL))
    assert on_ray.documents == local.documents > 40 and on_ray.chunks == local.chunks
    rows, indexes, stamps = table(tmp_path / "ray")
    assert (rows, indexes, stamps) == table(tmp_path / "local")
    assert {index[0] for index in indexes} >= {"text_idx", "title_idx", "path_idx"}
    # Bad files are skipped with the local run's reasons, read by the same readers.
    assert reasons(on_ray) == reasons(local)
    assert dict(reasons(on_ray))["cut.pdf"].startswith("damaged or not a PDF (")
    assert on_ray.windows_1252 == local.windows_1252 == ["legacy.txt"]


def test_vectors_of_a_local_model_are_those_of_a_local_run_and_reused_on_ray(tmp_path, local_model):
    from lancelot_indexer.embedding.local import LocalModel
    from lancelot_indexer.embedding.vectors import VectorExtension
    from lancelot_schema.local_models import Where

    model = LocalModel.load(str(local_model), Where(), threads=2, say=lambda line: None)
    docs = folder(tmp_path / "docs")
    build(
        docs,
        tmp_path / "local",
        Options(workers=2),
        extension=VectorExtension(model="", api_key=None, base_url=None, local=model),
    )
    build(
        docs,
        tmp_path / "ray",
        Options(ray=ray_tasks.LOCAL),
        extension=VectorExtension(model="", api_key=None, base_url=None, local=model),
    )
    rows, _, stamps = table(tmp_path / "ray")
    local_rows, _, local_stamps = table(tmp_path / "local")
    assert stamps == local_stamps and stamps[layout.META_EMBEDDING_MODEL.encode()] == b"local:all-MiniLM-L6-v2"
    assert [row[layout.ID] for row in rows] == [row[layout.ID] for row in local_rows]
    for row, local_row in zip(rows, local_rows, strict=True):
        assert row[layout.VECTOR] == pytest.approx(local_row[layout.VECTOR], abs=1e-5)
    again = VectorExtension(model="", api_key=None, base_url=None, local=model)
    build(docs, tmp_path / "ray", Options(ray=ray_tasks.LOCAL), extension=again)
    assert again.report is not None and (again.report.embedded, again.report.reused) == (0, len(rows))


def test_a_table_on_a_bucket_built_on_ray_is_the_one_a_local_run_writes_in_a_folder(s3_server, aws_env, tmp_path):
    aws_env(s3_server.env())  # the driver writes: only it needs the bucket's keys
    bucket = storage.locate(f"s3://{s3_server.bucket()}/db", Storage(endpoint=s3_server.endpoint, region=REGION))
    docs = folder(tmp_path / "docs")
    on_ray = build(docs, bucket, Options(ray=ray_tasks.LOCAL))
    local = build(docs, tmp_path / "local")
    assert table(bucket) == table(tmp_path / "local")
    assert reasons(on_ray) == reasons(local)
    (docs / "added.md").write_text("# Added\n\nA brand new quokka page.\n", encoding="utf-8")
    again = build(docs, bucket, Options(ray=ray_tasks.LOCAL))
    assert (again.read, again.kept) == (1, on_ray.documents)


def test_documents_on_a_bucket_read_in_ray_tasks_give_the_local_table_on_a_bucket(s3_server, aws_env, tmp_path):
    aws_env(s3_server.env())
    docs = folder(tmp_path / "docs")
    for parent, names, files in os.walk(docs):  # a bucket has no links: the folder without them
        for name in [*names, *files]:
            if (Path(parent) / name).is_symlink():
                (Path(parent) / name).unlink()
    name, settings = s3_server.bucket(), Storage(endpoint=s3_server.endpoint, region=REGION)
    s3_server.upload(docs, name, "docs")
    documents, db = storage.locate(f"s3://{name}/docs/", settings), storage.locate(f"s3://{name}/db", settings)
    on_ray = build(documents, db, Options(ray=ray_tasks.LOCAL))
    local = build(docs, tmp_path / "local")
    (rows, indexes, stamps), theirs = table(db), table(tmp_path / "local")
    assert stamps.pop(layout.META_SOURCE.encode()) == str(documents).encode()
    theirs[2].pop(layout.META_SOURCE.encode())
    assert (rows, indexes, stamps) == theirs
    assert on_ray.documents == local.documents > 40 and reasons(on_ray) == reasons(local)
    s3_server.client().put_object(Bucket=name, Key="docs/added.md", Body=b"# Added\n\nA brand new quokka page.\n")
    again = build(documents, db, Options(ray=ray_tasks.LOCAL))
    assert (again.read, again.kept) == (1, on_ray.documents)


def counting(log: Path):
    """A task body that notes each file it reads, and in which process, then reads them as Ray's tasks do."""

    def read_files(read, files, limit):
        with log.open("a", encoding="utf-8") as handle:
            handle.writelines(f"{os.getpid()} {item.relative}\n" for item in files)
        return ray_tasks._read_files(read, files, limit)

    return read_files


def read_in_tasks(log: Path) -> list[str]:
    lines = [line.split(" ", 1) for line in log.read_text(encoding="utf-8").splitlines()]
    log.write_text("", encoding="utf-8")
    assert all(int(pid) != os.getpid() for pid, _ in lines)  # read by Ray's workers, not here
    return sorted(relative for _, relative in lines)


def test_a_rebuild_sends_ray_only_the_changed_files_and_gives_the_full_builds_table(tmp_path, monkeypatch):
    docs, db, log = folder(tmp_path / "docs"), tmp_path / "db", tmp_path / "read.log"
    log.touch()
    monkeypatch.setattr(ray_tasks, "_read_files", counting(log))
    first = build(docs, db, Options(ray=ray_tasks.LOCAL))
    walked_files = sorted(item.relative for item in walked(docs).found)
    assert read_in_tasks(log) == walked_files
    # Files skipped are read again each run, as locally (they may have been mended): those, and the changed.
    unusable = sorted(set(walked_files) & {relative for relative, _ in reasons(first)})
    assert unusable == UNUSABLE
    (docs / "pages" / "page07.md").write_text("# Page 7\n\nNew text about pinions.\n", encoding="utf-8")
    (docs / "added.md").write_text("# Added\n\nA brand new quokka page.\n", encoding="utf-8")
    (docs / "UPPER.TXT").unlink()
    again = build(docs, db, Options(ray=ray_tasks.LOCAL))
    assert read_in_tasks(log) == sorted(["added.md", "pages/page07.md", *unusable])
    assert (again.read, again.kept, again.removed) == (2, first.documents - 2, 1)
    build(docs, db, Options(ray=ray_tasks.LOCAL))
    assert read_in_tasks(log) == unusable
    build(docs, tmp_path / "fresh")
    assert table(db)[:2] == table(tmp_path / "fresh")[:2]


def test_a_driver_killed_while_writing_leaves_the_table_serving_and_the_next_run_finishes(tmp_path):
    docs, db = folder(tmp_path / "docs"), tmp_path / "db"
    write_big_text(docs / "big.txt", 4 * 1024 * 1024)
    build(docs, db, Options(ray=ray_tasks.LOCAL))
    before = table(db)
    write_big_text(docs / "big.txt", 12 * 1024 * 1024)  # a large change: a long write to kill
    (docs / "pages" / "page01.md").unlink()
    # A driver of its own, joining this module's Ray as it would a cluster's: the cluster outlives it. It waits
    # at its commit to be killed, so that a loaded machine can never let the commit slip in before the kill.
    arguments = [docs, db, "--ray", ray.get_runtime_context().gcs_address]
    paused = [sys.executable, "-c", PAUSED_BEFORE_COMMIT, tmp_path / "written", "--quiet", *arguments]
    status = kill_at_first_write(paused, db / "documents.lance")
    assert status == -signal.SIGKILL, "the indexer finished before it could be killed"
    assert table(db) == before
    # The next run, through the command: big.txt read again (the unusable files too, skipped again).
    done = subprocess.run([BIN / "lancelot-index", *arguments], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Since the last build: 1 document read (new or changed)" in done.stdout
    assert "its Ray task died" not in done.stdout
    build(docs, tmp_path / "fresh")
    assert table(db)[:2] == table(tmp_path / "fresh")[:2]
    assert not list((db / "documents.lance").rglob(".tmp*"))


def test_searches_through_the_real_server_during_ray_rebuilds_never_err_and_see_whole_tables(tmp_path):
    docs, db = corpus.write_docs(tmp_path / "docs"), tmp_path / "db"
    build(docs, db, Options(ray=ray_tasks.LOCAL))
    searches_during_rebuilds(docs, db, lambda: build(docs, db, Options(ray=ray_tasks.LOCAL)), rebuilds=3)


def embedding_in(log: Path):
    """A task body that notes each slice of texts it embeds, and in which process, then embeds it as Ray's tasks do."""
    original = tasks.embed_slice

    def embed_slice(given, texts):
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {len(texts)}\n")
        return original(given, texts)

    return embed_slice


def test_embeddings_are_made_in_ray_tasks_within_the_bound_and_unchanged_vectors_are_reused(
    tmp_path, monkeypatch, embedding_server
):
    docs, db, log = folder(tmp_path / "docs"), tmp_path / "db", tmp_path / "embed.log"
    log.touch()
    monkeypatch.setattr(tasks, "embed_slice", embedding_in(log))

    def vectors(concurrency: int = 2) -> VectorExtension:
        url = embedding_server.url
        # Requests of 8 texts at most: many tasks out of a small folder.
        limits = Limits(max_inputs=8)
        return VectorExtension(model="test-8", api_key="sk-test", base_url=url, concurrency=concurrency, limits=limits)

    # One request at a time, however many tasks there are; answers slow enough that unbounded tasks overlap.
    embedding_server.slow_next(0.2, times=1000)
    on_ray = vectors(concurrency=1)
    build(docs, db, Options(ray=ray_tasks.LOCAL), extension=on_ray)
    slices = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(slices) > 4 and all(int(pid) != os.getpid() for pid, _ in slices)  # embedded by Ray's workers
    assert on_ray.report is not None and sum(int(size) for _, size in slices) == embedding_server.input_count
    assert embedding_server.stats()["max_in_flight"] == 1  # --embed-concurrency, across all the tasks
    embedding_server.reset()
    local = vectors()
    build(docs, tmp_path / "local", Options(workers=2), extension=local)
    assert table(db) == table(tmp_path / "local")  # the same vectors, stamps and indexes
    assert local.report is not None and on_ray.report.embedded == local.report.embedded
    # A rebuild embeds the changed page's passage only, in a task; every other vector is reused.
    log.write_text("", encoding="utf-8")
    (docs / "pages" / "page07.md").write_text("# Page 7\n\nNew text about pinions.\n", encoding="utf-8")
    again = vectors()
    build(docs, db, Options(ray=ray_tasks.LOCAL), extension=again)
    assert again.report is not None and (again.report.embedded, again.report.reused) == (1, local.report.embedded - 1)
    assert [size for _, size in (line.split() for line in log.read_text(encoding="utf-8").splitlines())] == ["1"]


def test_a_key_refused_in_a_task_stops_the_run_with_the_local_error_and_no_table(tmp_path, embedding_server):
    docs = folder(tmp_path / "docs")
    refused = VectorExtension(model="test-8", api_key="sk-wrong", base_url=embedding_server.url)
    with pytest.raises(EmbeddingKeyError) as raised:
        build(docs, tmp_path / "db", Options(ray=ray_tasks.LOCAL), extension=refused)
    assert type(raised.value) is EmbeddingKeyError  # itself, not Ray's error wrapping it
    assert str(raised.value).startswith(f"{embedding_server.url.split('//')[1].split('/')[0]} refused the API key")
    assert not (tmp_path / "db" / "documents.lance").exists()


def found(tmp_path: Path, names: list[str]) -> list[Found]:
    (tmp_path / "docs").mkdir()
    for name in names:
        (tmp_path / "docs" / name).write_text(f"# {name}\n\nText of {name}.\n", encoding="utf-8")
    return [Found(tmp_path / "docs" / name, name) for name in names]


def crashing(item: Found):
    """Reads as the indexer does, but the worker dies at once on a file named crash.md."""
    if item.relative == "crash.md":
        os._exit(9)
    return read_document(item, 1200)


def spinning(item: Found):
    if item.relative == "spin.md":
        time.sleep(120)
    return read_document(item, 1200)


def texts(outcomes: list) -> list[str]:
    """Each read file's first passage, or why it was not read."""
    return [outcome if isinstance(outcome, str) else outcome[2][0][3] for outcome in outcomes]


# Twelve files on two CPUs: two files a task, so a task that fails held another file too.
NAMES = [f"{letter}.md" for letter in "abcdefghijk"]


def test_a_task_whose_worker_dies_costs_only_the_file_that_killed_it(tmp_path):
    files = found(tmp_path, [*NAMES[:4], "crash.md", *NAMES[4:]])
    with ray_tasks.Cluster(ray_tasks.LOCAL) as cluster:
        outcomes = list(cluster.outcomes(crashing, files))
    expected = [f"{name}\n\nText of {name}." for name in NAMES]
    assert texts(outcomes) == [*expected[:4], "its Ray task died (WorkerCrashedError)", *expected[4:]]


def test_a_file_that_takes_too_long_is_stopped_and_skipped_with_the_local_reason(tmp_path):
    files = found(tmp_path, [*NAMES[:5], "spin.md", *NAMES[5:]])
    with ray_tasks.Cluster(ray_tasks.LOCAL, file_timeout=3.0) as cluster:
        # Workers started first: a task's time counts from when the tasks before it are done, and a worker
        # that starts on a loaded machine can take a second of it.
        list(cluster.outcomes(spinning, files[:2]))
        outcomes = list(cluster.outcomes(spinning, files))
    expected = [f"{name}\n\nText of {name}." for name in NAMES]
    assert texts(outcomes) == [*expected[:5], over_time(3.0), *expected[5:]]


def test_a_ray_this_process_had_joined_is_left_running(tmp_path):
    with ray_tasks.Cluster(ray_tasks.LOCAL) as cluster:
        outcomes = list(cluster.outcomes(partial(read_document, chunk_size=1200), found(tmp_path, ["a.md"])))
    assert texts(outcomes) == ["a.md\n\nText of a.md."]
    assert ray.is_initialized()


@pytest.mark.parametrize("address", ["auto", "ray://head:10001", "10.0.0.5:6379", ray_tasks.LOCAL])
def test_cluster_addresses_are_accepted(address):
    assert ray_tasks.address_problem(address) is None


@pytest.mark.parametrize("address", ["nowhere", "http://head:8265", ":6379", "head:port"])
def test_anything_else_is_refused_saying_what_an_address_is(address):
    assert ray_tasks.address_problem(address) == (
        f"{address!r} is no Ray address: give auto, ray://HEAD:10001 or HOST:PORT, or no ADDRESS for a Ray here."
    )


def test_a_head_address_where_nothing_answers_stops_the_run_at_once_saying_so(tmp_path):
    docs, db = folder(tmp_path / "docs"), tmp_path / "db"
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"  # bound, never listening: refused
        # A process of its own: this one has joined a Ray already, which a run uses whatever --ray says.
        command = [BIN / "lancelot-index", "--quiet", docs, db, "--ray", address]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith(f"Error: Nothing answers at {address} (Connection refused): ")
    assert not (db / "documents.lance").exists()


def test_without_the_extra_ray_is_refused_in_one_line_with_the_install_command(tmp_path):
    docs = folder(tmp_path / "docs")
    # A None entry in sys.modules makes `import` raise ImportError: Ray as if never installed.
    script = textwrap.dedent(
        """
        import sys
        sys.modules["ray"] = None
        from lancelot_indexer.cli import main
        main(sys.argv[1:])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(docs), str(tmp_path / "db"), "--ray", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    install = ROOT / "scripts" / "install"
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == f"Error: --ray needs the optional 'ray' extra: {install} --extras ray"
    assert not (tmp_path / "db" / "documents.lance").exists()
