"""DOCS on a bucket (`s3://BUCKET/PREFIX/`): a real S3-compatible server (moto on 127.0.0.1, checking signatures
and policies), listed as a folder is walked, read by the indexer's own readers, rebuilt incrementally."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lance
import pytest
from tests.support import builds
from tests.support.s3_server import DENY, REGION, S3Server, without_aws

from lancelot_indexer.documents import bucket
from lancelot_indexer.documents.collect import walked
from lancelot_indexer.errors import DocsError, StorageError
from lancelot_indexer.pipeline import build
from lancelot_schema import layout, storage
from lancelot_schema.settings import Storage

BIN = Path(sys.executable).parent


def pages(root: Path) -> Path:
    """A folder with what a listing must order, leave out and count as a walk does."""
    for relative, text in {
        "a-b.md": "# Dash\n\nSorted after the folder a/.",
        "a/z.md": "# Zed\n\nInside a folder that sorts first.",
        "guide/install.md": "# Install\n\nGet the package with pip.",
        "guide/drafts/wip.md": "# Draft\n\nNot ready.",
        "notes.odt": "not a document type",
        ".hidden.md": "# Hidden",
        "legacy.txt": None,
    }.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.write_bytes("Smart quotes \x93here\x94.".encode("latin-1"))
        else:
            path.write_text(text + "\n", encoding="utf-8")
    return root


def uploaded(s3_server: S3Server, docs: Path, prefix: str = "docs") -> storage.Location:
    name = s3_server.bucket()
    s3_server.upload(docs, name, prefix)
    return storage.locate(f"s3://{name}/{prefix}/", Storage(endpoint=s3_server.endpoint, region=REGION))


def rows(db: Path) -> list[tuple]:
    dataset = lance.dataset(str(db / "documents.lance"))
    columns = [layout.ID, layout.TEXT, layout.FILE_HASH, layout.PATH]
    return sorted(tuple(row.values()) for row in dataset.to_table(columns=columns).to_pylist())


def test_a_prefix_is_listed_in_the_walks_order_with_its_rules(s3_server, aws_env, tmp_path):
    aws_env(s3_server.env())
    docs = pages(tmp_path / "docs")
    listing = bucket.listed(uploaded(s3_server, docs), exclude=("drafts/",))
    local = walked(docs, exclude=("drafts/",))
    assert [item.relative for item in listing.found] == [item.relative for item in local.found]
    assert [item.relative for item in listing.found] == ["a/z.md", "a-b.md", "guide/install.md", "legacy.txt"]
    assert listing.excluded == local.excluded
    assert listing.ignored == local.ignored == {".odt": 1}


def test_the_generated_pages_of_builds_on_a_bucket_are_left_out_as_in_a_folder(s3_server, aws_env, tmp_path):
    aws_env(s3_server.env())
    docs = tmp_path / "docs"
    builds.sphinx(docs / "api")
    builds.mkdocs(docs / "site")
    listing, local = bucket.listed(uploaded(s3_server, docs)), walked(docs)
    assert listing.generated == local.generated and listing.generated
    assert [item.relative for item in listing.found] == [item.relative for item in local.found]
    assert {page.relative for page in listing.generated} >= {"api/genindex.html", "site/search.html"}
    kept = bucket.listed(uploaded(s3_server, docs), leave_generated=False)
    assert len(kept.found) == len(local.found) + len(local.generated) and not kept.generated


def index(location: storage.Location, db: Path, environ: dict[str, str]) -> str:
    """A run of the command: its worker processes read the objects with the credentials it was given."""
    done = subprocess.run(
        [BIN / "lancelot-index", str(location), db], capture_output=True, text=True, env=environ, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_table_read_from_a_bucket_is_the_folders_and_a_rebuild_reads_only_the_changed_object(
    s3_server, clean_env, tmp_path
):
    environ = {**without_aws(clean_env), **s3_server.env()}
    docs = pages(tmp_path / "docs")
    location = uploaded(s3_server, docs)
    said = index(location, tmp_path / "db", environ)
    assert f"Indexed 5 documents into 5 passages in table 'documents' of {tmp_path / 'db'}" in said
    assert "Read as Windows-1252 (not valid UTF-8): legacy.txt" in said
    build(docs, tmp_path / "local")
    assert rows(tmp_path / "db") == rows(tmp_path / "local")
    stamps = layout.decode_metadata(lance.dataset(str(tmp_path / "db" / "documents.lance")).schema.metadata)
    assert stamps["source"] == str(location)
    assert stamps["description"] == "docs"  # the prefix's name, as a folder's
    s3_server.client().put_object(Bucket=location.bucket, Key="docs/guide/install.md", Body=b"# Install\n\nUse uv.\n")
    said = index(location, tmp_path / "db", environ)
    assert "Since the last build: 1 document read (new or changed), 4 unchanged" in said
    assert "Install\n\nUse uv." in {row[1] for row in rows(tmp_path / "db")}


def test_a_prefix_with_no_object_says_so(s3_server, aws_env, tmp_path):
    aws_env(s3_server.env())
    location = uploaded(s3_server, pages(tmp_path / "docs"), prefix="docs")
    empty = storage.locate(f"s3://{location.bucket}/manual/", Storage(endpoint=s3_server.endpoint, region=REGION))
    with pytest.raises(DocsError, match=r"^DOCS s3://\S+/manual/ holds no object: check the bucket's prefix"):
        build(empty, tmp_path / "db")
    assert not (tmp_path / "db").exists()


def test_a_bucket_that_does_not_exist_is_named(s3_server, aws_env, tmp_path):
    aws_env(s3_server.env())
    missing = storage.locate("s3://no-such-docs/docs/", Storage(endpoint=s3_server.endpoint, region=REGION))
    with pytest.raises(StorageError, match=r"^The bucket no-such-docs of s3://no-such-docs/docs/ does not exist at "):
        build(missing, tmp_path / "db")


def test_credentials_that_may_not_list_the_prefix_are_one_line_saying_what_to_give(s3_server, clean_env, tmp_path):
    location = uploaded(s3_server, pages(tmp_path / "docs"))
    elsewhere = s3_server.user("nobody", DENY)
    environ = {**without_aws(clean_env), **s3_server.env(elsewhere)}
    command = [BIN / "lancelot-index", str(location), tmp_path / "db"]
    done = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Error: Listing DOCS {location} was denied (AccessDenied): no credentials were found, or the ones in use "
        "may not list it: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or a role allowed "
        "s3:ListBucket and s3:GetObject on the prefix (docs/object-storage.md)."
    ]
    assert elsewhere.secret_access_key not in done.stderr
    assert not (tmp_path / "db").exists()


def test_documents_on_another_store_are_refused_naming_what_is_read(tmp_path):
    done = subprocess.run(
        [BIN / "lancelot-index", "gs://acme-docs/manual", tmp_path / "db"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "give a folder or s3://BUCKET/PREFIX/" in " ".join(done.stderr.split())
    assert not (tmp_path / "db").exists()


def test_watch_is_refused_for_a_bucket(tmp_path, clean_env):
    command = [BIN / "lancelot-index", "s3://acme-docs/manual/", tmp_path / "db", "--watch"]
    done = subprocess.run(command, capture_output=True, text=True, env=without_aws(clean_env), timeout=60)
    assert done.returncode == 2
    assert "--watch follows a folder on this machine" in done.stderr
    assert not (tmp_path / "db").exists()
