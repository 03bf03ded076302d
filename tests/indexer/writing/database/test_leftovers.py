"""What a run that did not finish left: files no version names, removed by the next run as soon as it holds the
lock, in a folder and on a bucket (moto on 127.0.0.1); every version still present reads whole afterwards."""

from __future__ import annotations

import signal
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from tests.indexer.test_object_storage import OtherWriter, every_version_reads, killed_before_commit, pages, where
from tests.support.s3_server import S3Server

from lancelot_indexer.documents import collect
from lancelot_indexer.errors import ConflictError, EmptyDocsError, LockedError
from lancelot_indexer.pipeline import build
from lancelot_indexer.writing.database import lease, leftovers, lock
from lancelot_schema import storage

pytestmark = pytest.mark.waits  # tests/support/ordering.py


@dataclass(frozen=True)
class Db:
    location: storage.Location
    server: S3Server | None = None

    def files(self, table: str = "documents") -> set[str]:
        """The table's files, relative to it, as the folder or the bucket (boto3, not Lance) lists them."""
        if self.server is None:
            folder = self.location.path / f"{table}.lance"
            return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}
        prefix = f"{self.location.prefix}/{table}.lance/"
        return {key.removeprefix(prefix) for key in self.server.objects(self.location.bucket or "", prefix)}

    def dataset(self, table: str = "documents") -> lance.LanceDataset:
        return lance.dataset(self.location.table_uri(table), storage_options=dict(self.location.options))

    def unfinished(self) -> bool:
        """Whether the lock says that the last run did not finish."""
        if self.server is None:
            return bool((self.location.path / lock.LOCK_FILE).read_text(encoding="utf-8"))
        config = lance.dataset(lease.lock_uri(self.location), storage_options=dict(self.location.options)).config()
        return lease.UNFINISHED in config or lease.KEY in config


@pytest.fixture(params=["folder", "bucket"])
def db(request, tmp_path) -> Db:
    if request.param == "folder":
        return Db(storage.locate(str(tmp_path / "db")))
    server = request.getfixturevalue("s3_server")
    request.getfixturevalue("aws_env")(server.env())
    return Db(where(server, f"s3://{server.bucket()}/db"), server)


def untracked(db: Db) -> set[str]:
    """Lance's own account: the files of the folders a manifest fills that no version present names."""
    dataset = db.dataset()
    named = set(dataset.tracked_files().read_all().column("path").to_pylist())
    present = set(dataset.all_files().read_all().column("path").to_pylist())
    return {path for path in present - named if leftovers.versioned(path)}


def upload(dataset: lance.LanceDataset, name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        local = Path(folder) / "file"
        local.write_bytes(data)
        dataset.new_file_session().upload_file(str(local), name)


def refuse(exc: type[Exception]) -> None:
    raise exc("lost")


def test_files_no_version_names_are_removed_and_every_version_still_reads(db, tmp_path):
    build(pages(tmp_path / "docs"), db.location)
    build(pages(tmp_path / "docs", edition=1), db.location)  # a merge: deletion files, more versions
    reader = db.dataset()
    versions = every_version_reads(db.location)
    kept = db.files()
    # What writes killed before their commits leave: a merge's data and deletion files, an index segment, and
    # the transaction file of a commit whose manifest never came.
    some = reader.to_table(limit=3)
    changed = some.set_column(some.schema.get_field_index("text"), "text", pa.array(["changed"] * 3))
    merge = reader.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    merge.execute_uncommitted(changed)
    fragments = [fragment.fragment_id for fragment in reader.get_fragments()]
    reader.create_index_uncommitted("path", "BTREE", replace=True, fragment_ids=fragments)
    upload(reader, f"_transactions/{reader.version}-{uuid.uuid4()}.txn", b"")
    upload(reader, "notes.txt", b"someone's")  # not Lance's: never touched
    left = db.files() - kept - {"notes.txt"}
    assert {path.split("/")[0] for path in left} == {"data", "_deletions", "_indices", "_transactions"}, left
    assert left == untracked(db)

    with pytest.raises(LockedError):
        leftovers.remove(db.location, lambda: refuse(LockedError))  # the lock lost: nothing is removed
    assert db.files() == kept | left | {"notes.txt"}

    assert leftovers.remove(db.location, lambda: None) == len(left)
    assert db.files() == kept | {"notes.txt"}
    assert every_version_reads(db.location) == versions
    assert reader.to_table().num_rows == reader.count_rows()  # a reader of the latest version reads on
    assert leftovers.remove(db.location, lambda: None) == 0


def test_a_table_with_no_version_yet_has_no_file_to_keep(db, tmp_path):
    # A first build killed before its first commit leaves data files and no manifest.
    uri, options = db.location.table_uri("documents"), dict(db.location.options)
    lance.fragment.write_fragments(pa.table({"id": ["a"], "text": ["never committed"]}), uri, storage_options=options)
    assert any(path.startswith("data/") for path in db.files())
    assert leftovers.remove(db.location, lambda: None) >= 1
    assert db.files() == set()
    build(pages(tmp_path / "docs"), db.location)
    assert not untracked(db)


def test_a_run_that_stops_on_an_error_is_followed_by_one_that_removes_what_it_wrote(db, tmp_path, monkeypatch):
    monkeypatch.setattr(collect, "BATCH_ROWS", 2)
    build(pages(tmp_path / "first"), db.location)
    other = pages(tmp_path / "other", edition=2, word="other")
    with pytest.raises(ConflictError):
        # Its merge's files are uploaded, then Lance refuses the commit: another writer came first.
        build(pages(tmp_path / "mine", edition=3, word="mine"), db.location, extension=OtherWriter(db.location, other))
    left = untracked(db)
    assert any(path.startswith("data/") for path in left), left
    assert db.unfinished()
    versions = every_version_reads(db.location)

    report = build(other, db.location)  # the other writer's documents: nothing to write
    assert (report.read, report.kept) == (0, 6)
    assert not untracked(db) and not left & db.files()
    assert not db.unfinished()
    assert every_version_reads(db.location) == versions


def test_a_killed_rebuild_of_a_folder_leaves_files_the_next_run_removes_at_once(tmp_path):
    db = Db(storage.locate(str(tmp_path / "db")))
    docs = pages(tmp_path / "docs", files=20)
    build(docs, db.location)
    kept = db.files()
    originals = {path: path.read_text(encoding="utf-8") for path in sorted(docs.iterdir())[::2]}
    for path in originals:
        path.write_text(f"# {path.stem}\n\nRewritten {path.stem}.\n", encoding="utf-8")
    assert killed_before_commit(docs, db.location.path, None, tmp_path) == -signal.SIGKILL
    assert any(path.startswith("data/") for path in db.files() - kept)
    assert db.unfinished()
    for path, text in originals.items():
        path.write_text(text, encoding="utf-8")
    assert build(docs, db.location).read == 0  # nothing to write, and yet
    assert db.files() == kept and not db.unfinished()


def test_a_run_after_one_that_finished_looks_for_nothing(db, tmp_path, monkeypatch):
    looked: list[storage.Location] = []
    monkeypatch.setattr(leftovers, "remove", lambda location, check: looked.append(location) or 0)
    docs = pages(tmp_path / "docs")
    build(docs, db.location)
    build(docs, db.location)
    assert looked == []
    for page in docs.iterdir():
        page.unlink()
    with pytest.raises(EmptyDocsError):
        build(docs, db.location)
    assert db.unfinished()  # it stopped on an error: what it wrote cannot be known
    build(pages(docs), db.location)
    assert looked == [db.location] and not db.unfinished()
