"""Vectors staged beside the table until its commit: kept for the same model, removed for any other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from tests.indexer.conftest import group_ended
from tests.support.indexing import run_index
from tests.support.s3_server import REGION, without_aws

from lancelot_indexer.writing import staged as staging
from lancelot_indexer.writing.staged import Staged
from lancelot_schema import layout
from lancelot_schema.settings import Storage
from lancelot_schema.storage import Location, locate

MINI = {layout.META_EMBEDDING_MODEL: "local:all-MiniLM-L6-v2", layout.META_EMBEDDED: layout.EMBEDDED_TEXT}


def vectors(hashes: list[str], width: int = 4, settings: dict[str, str] = MINI) -> pa.Table:
    values = pa.array([float(n) for n in range(len(hashes) * width)], pa.float32())
    column = pa.FixedSizeListArray.from_arrays(values, width)
    stamp = {**settings, layout.META_VECTOR_WIDTH: str(width)}
    return pa.table({layout.TEXT_HASH: pa.array(hashes, pa.string()), layout.VECTOR: column}).replace_schema_metadata(
        stamp
    )


def folder(db: Location) -> object:
    return db.path / staging.FOLDER / "documents.lance"


def test_vectors_staged_by_a_run_are_found_by_the_next_run_of_the_same_model(tmp_path):
    db = locate(str(tmp_path / "db"))
    first = Staged.open(db, "documents", MINI)
    assert first.dataset is None
    first.add(vectors(["a", "b"]))
    first.add(vectors(["c"]))
    first.add(vectors([]))  # nothing to stage: no commit
    assert (first.added, first.found) == (3, None)  # this run's own vectors are not looked up again
    again = Staged.open(db, "documents", {**MINI, layout.META_EMBEDDING_HOST: "local"})
    table = again.dataset.to_table()
    assert table.column(layout.TEXT_HASH).to_pylist() == ["a", "b", "c"]
    assert table.column(layout.VECTOR).to_pylist()[2] == [0.0, 1.0, 2.0, 3.0]
    assert again.dataset.version == 2
    again.clear()
    assert not folder(db).exists()
    assert Staged.open(db, "documents", MINI).dataset is None


def test_vectors_of_another_model_or_input_or_of_a_run_without_vectors_are_removed_when_opened(tmp_path):
    db = locate(str(tmp_path / "db"))
    others = [
        {**MINI, layout.META_EMBEDDING_MODEL: "text-embedding-3-small"},
        {**MINI, layout.META_EMBEDDED: layout.EMBEDDED_CONTEXT},
        None,
    ]
    for settings in others:
        Staged.open(db, "documents", MINI).add(vectors(["a"]))
        assert folder(db).is_dir()
        assert Staged.open(db, "documents", settings).dataset is None
        assert not folder(db).exists(), settings
    Staged.open(db, "documents", MINI).add(vectors(["a"]))
    assert Staged.open(db, "other", None).dataset is None  # another table's are its own
    assert folder(db).is_dir()


def test_vectors_of_another_width_are_replaced_not_appended_to(tmp_path):
    db = locate(str(tmp_path / "db"))
    Staged.open(db, "documents", MINI).add(vectors(["a", "b"], width=4))
    again = Staged.open(db, "documents", MINI)
    again.add(vectors(["c"], width=8))
    assert again.found is None  # no longer looked up: gone
    table = Staged.open(db, "documents", MINI).dataset.to_table()
    assert table.column(layout.TEXT_HASH).to_pylist() == ["c"]
    assert table.schema.field(layout.VECTOR).type.list_size == 8


def test_a_first_append_killed_before_its_commit_leaves_nothing_that_is_kept(tmp_path):
    db = locate(str(tmp_path / "db"))
    data = folder(db) / "data"
    data.mkdir(parents=True)
    (data / "half-written.lance").write_bytes(b"LANCE" * 100)  # no manifest names it
    assert Staged.open(db, "documents", MINI).dataset is None
    assert not folder(db).exists()


def test_staged_vectors_on_a_bucket_are_kept_found_and_removed(s3_server, aws_env):
    aws_env(s3_server.env())
    bucket = s3_server.bucket()
    db = locate(f"s3://{bucket}/db", Storage(endpoint=s3_server.endpoint, region=REGION))
    Staged.open(db, "documents", MINI).add(vectors(["a", "b"]))
    assert any("/.lancelot-staged/documents.lance/_versions/" in f"/{key}" for key in s3_server.objects(bucket, "db/"))
    again = Staged.open(db, "documents", MINI)
    assert again.dataset.to_table().column(layout.TEXT_HASH).to_pylist() == ["a", "b"]
    again.clear()
    assert s3_server.objects(bucket, "db/") == {}


# A build stopped for good once it staged some vectors, then run again: the real command, the test endpoint (which
# counts the texts it is sent) or the real local model.

BIN = Path(sys.executable).parent
SIGNALS = {"ctrl-c": (signal.SIGINT, 130), "sigterm": (signal.SIGTERM, 143), "sigkill": (signal.SIGKILL, -9)}


def many_passages(root: Path, files: int, paragraphs: int, words: str = "the gears, chains and spokes of") -> Path:
    """`files` Markdown files of `paragraphs` distinct short paragraphs each."""
    root.mkdir()
    for f in range(files):
        body = "\n\n".join(f"Paragraph {p} of file {f}: {words} bicycle {f * 10_000 + p}." for p in range(paragraphs))
        (root / f"file{f:02}.md").write_text(f"# File {f}\n\n{body}\n", encoding="utf-8")
    return root


def endpoint_env(clean_env: dict[str, str], server) -> dict[str, str]:
    return clean_env | {"OPENAI_BASE_URL": server.url, "EMBEDDING_MODEL": "test-8", "OPENAI_API_KEY": "sk-test"}


def stop_once_staged(command: list, how: str, env: dict[str, str]) -> str:
    """Run `command` and stop it with `how` as soon as it logged that it staged vectors; what it said on stderr."""
    process = subprocess.Popen(
        [*command, "--log-level", "debug"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    said = []
    for line in process.stderr:
        said.append(line)
        if "staged" in line.split():
            break
    else:
        raise AssertionError("the run ended before it staged any vector:\n" + "".join(said))
    number, status = SIGNALS[how]
    if how == "ctrl-c":
        os.killpg(process.pid, number)  # a terminal sends it to the whole group
    else:
        process.send_signal(number)
    said.append(process.communicate(timeout=120)[1])
    assert group_ended(process.pid), "a worker outlived its stopped indexer"
    assert process.returncode == status, "".join(said)
    return "".join(said)


def staged_rows(db: Location) -> int:
    return lance.dataset(
        db.table_uri(f"{staging.FOLDER}/documents"), storage_options=dict(db.options) or None
    ).count_rows()


def snapshot(db: Location) -> list[dict]:
    dataset = lance.dataset(db.table_uri("documents"), storage_options=dict(db.options) or None)
    return sorted(dataset.to_table().to_pylist(), key=lambda row: row[layout.ID])


def resumed(command: list, db: Location, env: dict[str, str], server) -> tuple[int, list[dict]]:
    """Run the stopped `command` again: how many vectors it found staged, and the table it made (after checking
    that it embedded only the rest, said so, and removed the staged vectors)."""
    kept = staged_rows(db)
    if server is not None:
        server.reset()
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    rows = snapshot(db)
    assert 0 < kept < len(rows)
    assert f"Vectors: {len(rows) - kept} passages embedded" in again.stdout
    assert f", 0 reused from the current table, {kept} kept from a run that was stopped;" in again.stdout
    assert Staged.open(db, "documents", MINI).dataset is None
    return kept, rows


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sigkill"])
def test_a_build_stopped_after_staging_vectors_is_resumed_embedding_only_the_rest(
    tmp_path, clean_env, embedding_server, how
):
    docs = many_passages(tmp_path / "docs", files=5, paragraphs=1500)
    env, db = endpoint_env(clean_env, embedding_server), tmp_path / "db"
    command = [BIN / "lancelot-index", docs, db, "--embed", "--embed-concurrency", "1"]
    embedding_server.slow_next(0.5, times=1000)  # a slice of two requests at least a second: time to stop it
    said = stop_once_staged(command, how, env)
    if how != "sigkill":
        assert "no table was made. The vectors of the " in said and " embedded so far are kept: the next run" in said
    kept, rows = resumed(command, locate(str(db)), env, embedding_server)
    assert embedding_server.input_count == len(rows) - kept  # every text is a distinct one
    embedding_server.reset()
    clean = tmp_path / "clean"  # the table a build never stopped makes, in this process: the reference
    run_index(command[1], clean, *command[3:], env=env)
    assert embedding_server.input_count == len(rows)
    assert rows == snapshot(locate(str(clean)))


@pytest.mark.slow
def test_a_build_into_a_bucket_stopped_after_staging_vectors_is_resumed_there(
    tmp_path, clean_env, embedding_server, s3_server, aws_env
):
    aws_env(s3_server.env())
    bucket = s3_server.bucket()
    uri = f"s3://{bucket}/db"
    docs = many_passages(tmp_path / "docs", files=5, paragraphs=1500)
    env = {**without_aws(endpoint_env(clean_env, embedding_server)), **s3_server.env()}
    command = [BIN / "lancelot-index", docs, uri, "--embed", "--embed-concurrency", "1"]
    embedding_server.slow_next(0.5, times=1000)
    stop_once_staged(command, "sigterm", env)
    db = locate(uri, Storage(endpoint=s3_server.endpoint, region=REGION))
    kept, rows = resumed(command, db, env, embedding_server)
    assert embedding_server.input_count == len(rows) - kept
    assert not s3_server.objects(bucket, "db/.lancelot-staged/")


@pytest.mark.slow
def test_a_build_with_the_local_model_stopped_after_staging_vectors_is_resumed(tmp_path, clean_env, local_model):
    docs = many_passages(tmp_path / "docs", files=2, paragraphs=300)  # 600 passages: slices of 256
    db = tmp_path / "db"
    local = ["--embed", f"local:{local_model}", "--embed-threads", "1"]  # one core: time to stop it between slices
    command = [BIN / "lancelot-index", docs, db, "--passage-size", "100", *local]
    said = stop_once_staged(command, "ctrl-c", clean_env)
    assert " embedded so far are kept: the next run embeds the rest." in said
    kept, rows = resumed(command, locate(str(db)), clean_env, None)
    assert kept % 256 == 0
    clean = tmp_path / "clean"
    run_index(command[1], clean, *command[3:], env=clean_env)
    expected = snapshot(locate(str(clean)))
    assert [row[layout.TEXT] for row in rows] == [row[layout.TEXT] for row in expected]
    for row, same in zip(rows, expected, strict=True):
        assert row[layout.VECTOR] == pytest.approx(same[layout.VECTOR], abs=1e-5)
