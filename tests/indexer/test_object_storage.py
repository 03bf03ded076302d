"""lancelot-index writing a database on object storage: a real S3-compatible server (moto on 127.0.0.1,
checking signatures and IAM policies), the real indexer, the real server reading what it wrote.

The promises of a folder hold on a bucket: one commit per rebuild, seen at the readers' next check; a
rebuild that changes nothing reads and writes nothing of the table; a killed rebuild leaves the table as it
was and its files are removed by the next run; old versions outlive their readers; a second indexer is
refused at once, and one that bypassed the lock has its commit refused by Lance instead of merged.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import lance
import lancedb
import pytest
from tests.e2e.stdio_server import call, serve
from tests.indexer.conftest import PAUSED_BEFORE_COMMIT
from tests.support.s3_server import REGION, Keys, S3Server, read_only_policy, requests, without_aws

from lancelot_indexer.documents import collect
from lancelot_indexer.errors import ConflictError, LockedError
from lancelot_indexer.pipeline import Options, build, metadata
from lancelot_indexer.writing import sources
from lancelot_indexer.writing.database import lease, lock
from lancelot_schema import layout, storage
from lancelot_schema.settings import Storage

pytestmark = pytest.mark.waits  # tests/support/ordering.py

BIN = Path(sys.executable).parent
SECRET = "wJalrXUtnFEMI-not-a-real-secret"


def indexer_policy(bucket: str, prefix: str) -> dict:
    """README's policy for the indexer's role: the server's (list under the prefix, read its objects), and
    write and delete them too."""
    policy = read_only_policy(bucket, prefix)
    read = policy["Statement"][1]
    writes = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
    policy["Statement"][1] = {**read, "Sid": "WriteTheDatabase", "Action": writes}
    return policy


def pages(root: Path, files: int = 6, edition: int = 0, word: str = "gears") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        body = "\n\n".join(f"Paragraph {p} of page {n}, edition {edition}: {word} and spokes." for p in range(8))
        (root / f"page{n:02}.md").write_text(f"# Page {n}\n\n{body}\n", encoding="utf-8")
    return root


def where(s3_server: S3Server, uri: str) -> storage.Location:
    return storage.locate(uri, Storage(endpoint=s3_server.endpoint, region=REGION))


def rows(location: storage.Location, table: str = "documents") -> list[dict]:
    dataset = lance.dataset(location.table_uri(table), storage_options=dict(location.options))
    return sorted(dataset.to_table(columns=["id", "text"]).to_pylist(), key=lambda row: row["id"])


def stamp(location: storage.Location, table: str = "documents") -> dict[str, str]:
    dataset = lance.dataset(location.table_uri(table), storage_options=dict(location.options))
    return layout.decode_metadata(dataset.schema.metadata)


def version(location: storage.Location, table: str = "documents") -> int:
    return int(lance.dataset(location.table_uri(table), storage_options=dict(location.options)).version)


def index(docs: Path, uri: str, environ: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BIN / "lancelot-index", *extra, docs, uri], capture_output=True, text=True, env=environ, timeout=300
    )


@dataclass(frozen=True)
class Bucket:
    name: str
    uri: str  # s3://NAME/db
    location: storage.Location


@pytest.fixture
def bucket_db(s3_server, aws_env) -> Bucket:
    """The `db` prefix of a new bucket, which this process reaches too (Lance reads the AWS_ variables)."""
    aws_env(s3_server.env())
    name = s3_server.bucket()
    return Bucket(name, f"s3://{name}/db", where(s3_server, f"s3://{name}/db"))


@pytest.fixture
def env_for(s3_server, clean_env):
    """The environment of a lancelot process that reaches the test server with `keys` (the admin's by default)."""

    def make(keys: Keys | None = None, **variables: str) -> dict[str, str]:
        return {**without_aws(clean_env), **s3_server.env(keys), **variables}

    return make


def test_an_index_written_to_a_bucket_is_searched_by_the_server_and_a_rebuild_seen_at_its_next_check(
    s3_server, env_for, tmp_path
):
    bucket = s3_server.bucket()
    uri = f"s3://{bucket}/teams/docs"
    writer = s3_server.user("lancelot-indexer", indexer_policy(bucket, "teams/docs"))
    reader = s3_server.user("lancelot-server", read_only_policy(bucket, "teams/docs"))
    docs = pages(tmp_path / "docs", word="sprockets")
    done = index(docs, uri, env_for(writer))
    assert done.returncode == 0, done.stderr
    assert f"in table 'documents' of {uri} in " in done.stdout
    assert not any(path.name.startswith("s3") for path in tmp_path.iterdir())  # no local folder named s3:

    def edit() -> subprocess.CompletedProcess:
        (docs / "page00.md").write_text("# Page 0\n\nNow about derailleurs.\n", encoding="utf-8")
        return index(docs, uri, env_for(writer), "--quiet")

    async def session(client):
        before = await call(client, "lancedb_search", {"query": "derailleurs", "mode": "text"})
        found = await call(client, "lancedb_search", {"query": "sprockets", "mode": "text"})
        rebuilt = await anyio_to_thread(edit)
        after = await call(client, "lancedb_search", {"query": "derailleurs", "mode": "text"})
        status = await call(client, "lancedb_status")
        return before, found, rebuilt, after, status

    before, found, rebuilt, after, status = serve(uri, session, **s3_server.env(reader), LANCELOT_REFRESH_SECONDS="0")
    assert hits(found) > 0 and "sprockets" in found.content[0].text
    assert hits(before) == 0
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert hits(after) == 1  # the rebuild's one commit, seen at the next check
    assert status.structured_content["database"]["tables"] == ["documents"]  # the lock dataset is no table


def hits(result) -> int:
    assert not result.is_error, result.content[0].text
    return int(json.loads(result.content[0].text)["count"])


async def anyio_to_thread(function):
    import anyio

    return await anyio.to_thread.run_sync(function)


def test_a_rebuild_that_changes_nothing_reads_and_writes_nothing_of_the_table(env_for, aws_env, tmp_path):
    log = tmp_path / "requests.log"
    with S3Server(log=log) as server:
        aws_env(server.env())
        bucket = server.bucket()
        uri = f"s3://{bucket}/db"
        docs = pages(tmp_path / "docs")
        environ = {**env_for(), **server.env()}
        assert index(docs, uri, environ, "--quiet").returncode == 0
        location = where(server, uri)
        first = version(location)
        table = server.objects(bucket, "db/documents.lance/")
        seen = len(requests(log))
        again = index(docs, uri, environ)
        assert again.returncode == 0, again.stderr
        assert "0 documents read (new or changed), 6 unchanged, 0 removed" in " ".join(again.stdout.split())
        made = requests(log)[seen:]
        on_table = [line for line in made if "/db/documents.lance/" in line]
        # The saved copy, found current by one listing of the versions: no data read, nothing written.
        assert all(line.startswith("GET ") for line in on_table), on_table
        assert not [line for line in on_table if "/data/" in line or "/_indices/" in line]
        assert len(on_table) <= 3, on_table
        assert version(location) == first and server.objects(bucket, "db/documents.lance/") == table

        (docs / "page03.md").write_text("# Page 3\n\nChanged.\n", encoding="utf-8")
        changed = index(docs, uri, environ)
        assert changed.returncode == 0, changed.stderr
        assert "1 document read (new or changed), 5 unchanged, 0 removed" in " ".join(changed.stdout.split())
        assert any("Changed." in row["text"] for row in rows(location))


@pytest.mark.parametrize("on", ["folder", "bucket"])
def test_a_rebuild_from_another_folder_with_the_same_documents_stamps_that_folder(bucket_db, tmp_path, on):
    db: Path | storage.Location = bucket_db.location if on == "bucket" else tmp_path / "db"
    location = storage.locate(str(db)) if isinstance(db, Path) else db
    first = pages(tmp_path / "first")
    build(first, db)
    moved = tmp_path / "moved"
    shutil.copytree(first, moved)
    before, number = rows(location), version(location)
    report = build(moved, db)
    assert (report.read, report.kept) == (0, 6)
    assert stamp(location)["source"] == str(moved.absolute())
    assert version(location) == number + 1 and report.version == number + 1  # one metadata commit
    assert rows(location) == before
    again = build(moved, db)
    assert again.version == number + 1  # stamped already: nothing more
    # Without the saved copy the table itself is read, and the stamp follows the folder as well.
    copy = sources.place(location, "documents")
    assert copy is not None
    copy.remove()
    build(first, db)
    assert stamp(location)["source"] == str(first.absolute()) and rows(location) == before


def test_a_second_indexer_is_refused_at_once_while_one_holds_the_bucket(bucket_db, tmp_path):
    location = bucket_db.location
    progress: list[tuple] = []
    with lock.locked(location), pytest.raises(LockedError, match=r"Another lancelot-index is writing to s3://"):
        build(pages(tmp_path / "docs"), location, on_progress=lambda *step: progress.append(step))
    assert progress == []  # refused before reading a single document
    build(pages(tmp_path / "docs"), location)  # released: the next run takes it


def race(location: storage.Location, runs: int) -> tuple[list[lease.Lease], list[LockedError]]:
    """`runs` threads take the lock at the same moment: those that hold it, and the refusals."""
    barrier = threading.Barrier(runs)
    held: list[lease.Lease] = []
    refused: list[LockedError] = []

    def take() -> None:
        attempt = lease.Lease(location)
        barrier.wait()
        try:
            attempt.take()
            held.append(attempt)
        except LockedError as exc:
            refused.append(exc)

    threads = [threading.Thread(target=take) for _ in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return held, refused


def test_of_indexers_taking_the_lock_at_the_same_moment_exactly_one_holds_it(bucket_db):
    location = bucket_db.location
    for _ in range(4):  # the first round also races to make the lock dataset
        held, refused = race(location, 3)
        assert len(held) == 1 and len(refused) == 2
        assert all("Another lancelot-index" in str(exc) for exc in refused)
        held[0].release()


def test_a_lease_renewed_in_time_is_held_and_one_left_to_lapse_elsewhere_is_taken_over(bucket_db):
    location = bucket_db.location
    holder = lease.Lease(location, renew=0.2)
    holder.take()
    deadline = time.monotonic() + 30
    while True:  # until a renewal has been committed (every 0.2 s; later on a loaded machine)
        record = json.loads(lance.dataset(holder.uri, storage_options=dict(location.options)).config()[lease.KEY])
        if record["renewed"] > record["since"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert record["renewed"] > record["since"] and record["pid"] == os.getpid()
    with pytest.raises(LockedError, match=rf"\(pid {os.getpid()} on .*wait for it to finish"):
        lease.Lease(location).take()  # alive on this machine: held
    holder.release()

    # A run on a machine that vanished: its record names another machine and was last renewed long ago.
    vanished = lease.Lease(location, renew=600)
    old = "2020-01-01T00:00:00.000+00:00"
    vanished._holder = dataclasses.replace(vanished._holder, machine="elsewhere", since=old, renewed=old)
    vanished.take()
    vanished._stop.set()  # it renews no more
    taker = lease.Lease(location)
    taker.take()
    assert taker.taken_over == f"it was last renewed at {old}"
    taker.release()


def test_a_holder_whose_lease_was_taken_over_stops_before_its_next_commit(bucket_db):
    location = bucket_db.location
    holder = lease.Lease(location, renew=0.2)
    holder.take()
    holder.check()
    other = lease.Lease(location)
    with holder._mutex:  # no renewal between reading the lock and taking it (a loaded machine let one in)
        other._dataset = lance.dataset(other.uri, storage_options=dict(location.options))
        assert other._swap(other._dataset.version, other._holder) is not None  # as a run that judged it gone would
    # Its renewal thread ends once it finds the lease taken over: wait for that, not for a fixed time.
    assert holder._thread is not None
    holder._thread.join(timeout=30)
    assert not holder._thread.is_alive()
    with pytest.raises(LockedError, match=r"lost the lock of s3://.*another lancelot-index took it over"):
        holder.check()
    holder.release()  # never frees what another run holds
    record = json.loads(lance.dataset(other.uri, storage_options=dict(location.options)).config()[lease.KEY])
    assert record["owner"] == other._holder.owner


def test_the_lock_datasets_old_versions_are_removed_now_and_then(bucket_db):
    location = bucket_db.location
    for _ in range(12):  # two versions a run: taken, released
        taken = lease.Lease(location, lease=timedelta(milliseconds=1))
        taken.take()
        taken.release()
    versions = lance.dataset(lease.lock_uri(location), storage_options=dict(location.options)).versions()
    assert max(item["version"] for item in versions) == 25 and len(versions) < 12


def test_a_killed_rebuild_leaves_the_table_readable_and_the_next_run_removes_what_it_left_at_once(
    s3_server, bucket_db, env_for, tmp_path
):
    bucket, uri, location = bucket_db.name, bucket_db.uri, bucket_db.location
    environ = env_for()
    docs = pages(tmp_path / "docs", files=20)
    assert index(docs, uri, environ, "--quiet").returncode == 0
    before = rows(location)
    files_before = s3_server.objects(bucket, "db/documents.lance/")
    reader = lance.dataset(location.table_uri("documents"), storage_options=dict(location.options))
    versions = every_version_reads(location)
    originals = {path: path.read_text(encoding="utf-8") for path in sorted(docs.iterdir())[::2]}
    for path in originals:
        path.write_text(f"# {path.stem}\n\nRewritten {path.stem}: chains.\n", encoding="utf-8")
    assert killed_before_commit(docs, uri, environ, tmp_path) == -signal.SIGKILL
    leftovers = set(s3_server.objects(bucket, "db/documents.lance/")) - set(files_before)
    assert any("/data/" in key for key in leftovers), leftovers  # written, never committed
    assert rows(location) == before  # readers see the table as it was
    table = lancedb.connect(uri, storage_options=dict(location.options)).open_table("documents")
    assert table.search("gears", query_type="fts", fts_columns="text").limit(1000).to_list()

    # The next run, at once, with nothing to write (the documents are as the table holds them again): it takes
    # the killed run's lease over (its process is gone) and removes what that run wrote before anything else.
    for path, text in originals.items():
        path.write_text(text, encoding="utf-8")
    done = index(docs, uri, environ)
    assert done.returncode == 0, done.stderr
    assert "taking over the lock" in done.stderr and "is gone" in done.stderr
    assert "0 documents read (new or changed), 20 unchanged, 0 removed" in " ".join(done.stdout.split())
    assert s3_server.objects(bucket, "db/documents.lance/") == files_before  # exactly as before the kill
    assert every_version_reads(location) == versions and reader.version in versions
    assert sorted(reader.to_table(columns=["id", "text"]).to_pylist(), key=lambda row: row["id"]) == before
    config = lance.dataset(lease.lock_uri(location), storage_options=dict(location.options)).config()
    assert lease.KEY not in config and lease.UNFINISHED not in config  # released, and nothing left to remove

    # And the change the killed run was making is made by the run after.
    for path in originals:
        path.write_text(f"# {path.stem}\n\nRewritten {path.stem}: chains.\n", encoding="utf-8")
    assert index(docs, uri, environ, "--quiet").returncode == 0
    assert sum("Rewritten" in row["text"] for row in rows(location)) == 10
    assert reader.to_table().num_rows == len(before)  # still kept for its readers (keep_versions)


def killed_before_commit(docs: Path, db: str | Path, environ: dict[str, str] | None, tmp_path: Path) -> int:
    """Run the real indexer, pause it between writing the merge's data files and committing it, kill -9 it;
    its exit status."""
    written = tmp_path / "written"
    written.unlink(missing_ok=True)
    child = subprocess.Popen(
        [sys.executable, "-c", PAUSED_BEFORE_COMMIT, str(written), "--quiet", str(docs), str(db)],
        env=environ,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not written.exists():
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline, "the indexer never reached its commit"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        if child.stderr is not None:
            child.stderr.close()
    return child.returncode


def every_version_reads(location: storage.Location, table: str = "documents") -> set[int]:
    """Open every version still present, read all its rows, and check that each file Lance says it uses (its
    fragments' data and deletion files, its indexes' folders) is there; the versions."""
    uri, options = location.table_uri(table), dict(location.options)
    present = set(lance.dataset(uri, storage_options=options).new_file_session().list())
    folders = {"/".join(path.split("/")[:2]) for path in present if path.startswith("_indices/")}
    versions = {int(item["version"]) for item in lance.dataset(uri, storage_options=options).versions()}
    for number in versions:
        dataset = lance.dataset(uri, version=number, storage_options=options)
        assert dataset.to_table().num_rows == dataset.count_rows()
        for fragment in dataset.get_fragments():
            metadata = fragment.metadata
            assert {f"data/{data.path}" for data in metadata.files} <= present
            if metadata.deletion_file is not None:
                assert metadata.deletion_file.path(metadata.id) in present
        for index in dataset.describe_indices():
            assert {f"_indices/{segment.uuid}" for segment in index.segments} <= folders, index.name
    return versions


def test_two_indexers_writing_one_bucket_at_once_one_succeeds_and_the_other_is_refused(
    s3_server, bucket_db, env_for, tmp_path
):
    uri, location = bucket_db.uri, bucket_db.location
    environ = env_for()
    assert index(pages(tmp_path / "first", files=30), uri, environ, "--quiet").returncode == 0
    editions = {
        name: pages(tmp_path / name, files=30, edition=n, word=name) for n, name in enumerate(["red", "blue"], 1)
    }
    # Each indexer's first request for the lock waits until both have made it: they then take it at the same
    # moment, whatever a loaded machine's delay in starting one (a latency once had to cover that, and could not).
    with s3_server.hold(f"/{lease.NAME}/") as waiting:
        started = [
            subprocess.Popen(
                [BIN / "lancelot-index", "--quiet", docs, uri],
                env=environ,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for docs in editions.values()
        ]
        deadline = time.monotonic() + 120
        while waiting() < 2:
            ended = [process.communicate() for process in started if process.poll() is not None]
            assert not ended, ended  # what stopped an indexer before the lock (only those: a held one would wait)
            assert time.monotonic() < deadline
            time.sleep(0.05)
    outcomes = {
        name: (*process.communicate(timeout=300), process.returncode)
        for name, process in zip(editions, started, strict=True)
    }
    codes = sorted(code for _, _, code in outcomes.values())
    assert codes == [0, 1], outcomes
    (winner,) = [name for name, (_, _, code) in outcomes.items() if code == 0]
    (loser,) = [name for name, (_, _, code) in outcomes.items() if code == 1]
    refused = outcomes[loser][1]
    # Refused on finding the lock held, or on losing the race to take it.
    assert refused.startswith("Error: Another lancelot-index ") and uri in refused, refused
    assert refused.count("\n") == 1 and "Traceback" not in refused
    texts = [row["text"] for row in rows(location)]
    assert texts and all(winner in text for text in texts if "Paragraph" in text)
    assert stamp(location)["source"] == str(editions[winner].absolute())


class OtherWriter:
    """An `Extension` that, while the rows stream to Lance, has another writer replace the table: as an
    indexer that bypassed the lock would."""

    def __init__(self, location: storage.Location, docs: Path) -> None:
        self.location, self.docs, self.batches = location, docs, 0

    def settings(self) -> dict[str, str]:
        return {}

    def extend(self, rows, current, staged):
        self.batches += 1
        if self.batches == 2:  # the first is read before the merge is planned; this one streams into it
            from lancelot_indexer.writing import write

            read = collect.collect(self.docs, layout.DEFAULT_CHUNK_SIZE, workers=1, file_timeout=None, file_memory=None)
            # Described as lancelot-index describes it: the run after finds nothing to stamp.
            stamp = {**metadata(layout.DEFAULT_CHUNK_SIZE, source=self.docs), layout.META_DESCRIPTION: self.docs.name}
            write.replace_table(
                self.location, "documents", write.rows_table(read.columns), stamp, keep_versions=timedelta(minutes=2)
            )
        return rows, {}

    def kept(self, rows: int, width: int) -> None:
        pass


def test_a_commit_on_a_table_another_writer_changed_meanwhile_is_refused_not_merged(bucket_db, tmp_path, monkeypatch):
    monkeypatch.setattr(collect, "BATCH_ROWS", 2)
    location = bucket_db.location
    build(pages(tmp_path / "first"), location)
    other = pages(tmp_path / "other", edition=2, word="other")
    mine = pages(tmp_path / "mine", edition=3, word="mine")
    writer = OtherWriter(location, other)
    with pytest.raises(ConflictError, match=r"Another writer committed to table 'documents' of s3://.*Lance refused"):
        build(mine, location, extension=writer)
    texts = [row["text"] for row in rows(location)]
    assert texts and all("other" in text for text in texts if "Paragraph" in text)


def test_old_versions_on_a_bucket_outlive_their_readers_for_keep_versions(bucket_db, tmp_path):
    location = bucket_db.location
    uri = location.table_uri("documents")
    options = dict(location.options)
    build(pages(tmp_path / "docs"), location)
    held = lance.dataset(uri, storage_options=options)  # a reader on version 1
    build(pages(tmp_path / "docs", edition=1), location, Options(keep_versions=timedelta(minutes=2)))
    assert held.to_table().num_rows == lance.dataset(uri, version=held.version, storage_options=options).count_rows()
    build(pages(tmp_path / "docs", edition=2), location, Options(keep_versions=timedelta(0)))
    kept = [item["version"] for item in lance.dataset(uri, storage_options=options).versions()]
    assert held.version not in kept


@pytest.mark.parametrize("fault", ["bucket", "secret", "endpoint", "denied", "region"])
def test_a_bucket_that_cannot_be_written_is_one_line_naming_it_and_never_the_secret(
    s3_server, env_for, tmp_path, fault
):
    bucket = s3_server.bucket()
    uri = f"s3://{bucket}/db"
    keys = Keys(s3_server.admin.access_key_id, SECRET) if fault == "secret" else s3_server.admin
    if fault == "bucket":
        uri = f"s3://no-{bucket}/db"
    if fault == "denied":
        keys = s3_server.user("reader", read_only_policy(bucket, "db"))
    environ = env_for(keys)
    if fault == "endpoint":
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{sock.getsockname()[1]}"
    if fault == "region":
        # No region and no endpoint: Lance asks AWS where the bucket is, here through a proxy that is not there
        # (nothing leaves this machine), and gets no answer.
        import socket

        for name in ("AWS_REGION", "AWS_ENDPOINT_URL", "NO_PROXY", "no_proxy", "https_proxy"):
            environ.pop(name, None)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            environ["HTTPS_PROXY"] = f"http://127.0.0.1:{sock.getsockname()[1]}"
    done = index(pages(tmp_path / "docs", files=2), uri, environ)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and uri in lines[0], done.stderr
    expected = {
        "bucket": "does not exist",
        "secret": "refused the credentials",
        "endpoint": "Cannot reach the storage service",
        "denied": "was denied (AccessDenied)",
        "region": "Cannot tell the region of the bucket of s3://",
    }[fault]
    assert expected in lines[0]
    assert SECRET not in done.stderr and keys.secret_access_key not in done.stderr
    assert not list(tmp_path.glob("s3*"))


def test_an_endpoint_that_is_no_url_is_one_line_before_anything_is_read(env_for, tmp_path):
    environ = env_for(AWS_ENDPOINT_URL="minio.internal:9000")
    done = index(pages(tmp_path / "docs", files=1), "s3://acme-docs/db", environ)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.strip() == (
        "Error: AWS_ENDPOINT_URL minio.internal:9000 is not a URL: write http://HOST:PORT or https://HOST."
    )


def test_a_merge_of_every_page_on_a_bucket_keeps_its_data_files_within_the_cap(bucket_db, tmp_path, monkeypatch):
    from lancelot_indexer.writing import indexes

    monkeypatch.setattr(indexes, "ROWS_PER_FILE", 2)
    docs = pages(tmp_path / "docs")  # a passage a page
    build(docs, bucket_db.location)
    pages(docs, edition=1)  # every page changed: Lance's merge writes every row into one file, split before the commit
    assert build(docs, bucket_db.location).strategy == "merge"
    dataset = lance.dataset(bucket_db.location.table_uri("documents"), storage_options=dict(bucket_db.location.options))
    assert len(dataset.get_fragments()) > 2
    assert max(fragment.metadata.physical_rows for fragment in dataset.get_fragments()) <= 2
    assert all("edition 1" in row["text"] for row in rows(bucket_db.location) if "Paragraph" in row["text"])
    named = {path for batch in dataset.tracked_files() for path in batch.column("path").to_pylist()}
    options = dict(bucket_db.location.options)
    stored = lance.file.LanceFileSession(bucket_db.location.table_uri("documents"), storage_options=options).list()
    assert {path for path in stored if path.startswith("data/")} <= named  # the file split was deleted
