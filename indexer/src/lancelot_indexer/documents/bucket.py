"""DOCS on object storage (`s3://BUCKET/PREFIX/`): the documents listed here, their bytes read where they are read.

    listed(location, exclude) -> Walked             # what `collect.walked` finds in a folder, for a prefix
    Objects(bucket, prefix, endpoint, region).read(relative) -> bytes   # in a worker process or a Ray task

The listing keeps the folder walk's rules that a bucket can have: paths in the walk's order (folder by
folder, by name), no dot names, `--exclude` (a folder matched is not entered), documents by suffix, the
other files counted, and the generated pages of documentation builds left out (`generated.py`: a build told
by its marker objects, of which the first KB is read). A bucket has no links, so nothing is a duplicate or a
refused link. Each process that reads makes its own client from the endpoint and region resolved
at the entry point and the credentials of its own machine's chain (the environment, a profile, the role it
runs as): no key travels with a task. pyarrow's S3 client is imported on this path only.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from lancelot_indexer.documents.collect import Walked
from lancelot_indexer.documents.generated import Build, Generated, kind_of, recognise
from lancelot_indexer.documents.walk import Excluded, Found, excluded_by, is_document
from lancelot_indexer.errors import DocsError, StorageError
from lancelot_indexer.readers.formats import Unreadable
from lancelot_schema import storage
from lancelot_schema.storage import Location

# Characters of the client's own message kept in an object's reason for being skipped.
_MESSAGE = 120


@dataclass(frozen=True)
class Objects:
    """Where the documents are: `bucket`, `prefix` (no slash at either end), and the S3 endpoint and region."""

    bucket: str
    prefix: str
    endpoint: str | None = None
    region: str | None = None

    def key(self, relative: str) -> str:
        return f"{self.bucket}/{self.prefix}/{relative}" if self.prefix else f"{self.bucket}/{relative}"

    def client(self) -> Any:
        """This process's S3 client for the bucket."""
        return _client(self.endpoint, self.region, os.getpid())

    def head(self, relative: str, size: int) -> bytes | None:
        """The first `size` bytes of the object at `relative` (a build's marker); None when it cannot be read."""
        try:
            with self.client().open_input_file(self.key(relative)) as handle:
                data: bytes = handle.read_at(size, 0)
                return data
        except OSError:
            return None

    def read(self, relative: str) -> bytes:
        """The bytes of the object at `relative` under the prefix; `Unreadable` saying why when it cannot be read."""
        try:
            with self.client().open_input_stream(self.key(relative)) as handle:
                data: bytes = handle.read()
                return data
        except FileNotFoundError:
            raise Unreadable("unreadable: the object was removed after the listing") from None
        except OSError as exc:
            code = re.search(r"AWS Error (\w+)", str(exc))
            why = code[1] if code else " ".join(str(exc).split())[:_MESSAGE]
            hint = ": the credentials in use may need s3:GetObject on it" if why == "ACCESS_DENIED" else ""
            raise Unreadable(f"unreadable object ({why}){hint}") from None


def objects_of(location: Location) -> Objects:
    """The documents at `location`, an s3:// URI resolved with the run's settings."""
    if location.scheme != "s3" or location.bucket is None:
        raise DocsError(f"DOCS {location}: documents are read from a folder or from s3://BUCKET/PREFIX/ only.")
    return Objects(
        location.bucket, location.prefix, location.options.get("aws_endpoint"), location.options.get("aws_region")
    )


@functools.cache
def _client(endpoint: str | None, region: str | None, process: int) -> Any:
    """One S3 client a process (`process`: its id, so that a forked worker makes its own): pyarrow's, which
    reads the AWS credential chain itself."""
    from pyarrow import fs

    given: dict[str, str] = {} if region is None else {"region": region}
    if endpoint is not None:
        scheme, _, host = endpoint.partition("://")
        given.update(endpoint_override=host.rstrip("/"), scheme=scheme.lower())
    return fs.S3FileSystem(**given)


def listed(location: Location, exclude: Sequence[str] = (), *, leave_generated: bool = True) -> Walked:
    """The documents under `location`'s prefix, what `exclude` left out, the generated pages of the documentation
    builds recognised on the way (with `leave_generated`) and the other files by suffix."""
    objects = objects_of(location)
    from pyarrow import fs

    root = objects.key("").rstrip("/")
    try:
        infos = objects.client().get_file_info(fs.FileSelector(root, recursive=True))
    except FileNotFoundError:
        raise DocsError(
            f"DOCS {location} holds no object: check the bucket's prefix (the documents' folder on it)."
        ) from None
    except OSError as exc:
        raise StorageError(_failure(location, exc)) from None
    keys = sorted(
        (info.path[len(root) + 1 :] for info in infos if info.type == fs.FileType.File),
        key=lambda relative: relative.split("/"),  # the walk's order: folder by folder, by name
    )
    builds = _builds(objects, keys) if leave_generated else {}
    found: list[Found] = []
    left_out: dict[str, Excluded] = {}
    made: list[Generated] = []
    ignored: Counter[str] = Counter()
    for relative in keys:
        parts = relative.split("/")
        if any(part.startswith(".") or not part for part in parts):
            continue
        if (gone := _excluded(parts, exclude)) is not None:
            left_out.setdefault(gone.relative, gone)
            continue
        if not is_document(parts[-1]):
            ignored[PurePosixPath(relative).suffix.lower()] += 1
            continue
        around = [build for depth in range(len(parts)) for build in builds.get(_folder(parts, depth), [])]
        if around and (kind := kind_of(around, relative)):
            made.append(Generated(relative, kind[0].generator.name, kind[1]))
        else:
            found.append(Found(Path(PurePosixPath(relative)), relative, objects))
    return Walked(found, [], list(left_out.values()), [], made, ignored)


def _folder(parts: list[str], depth: int) -> str:
    """The path under DOCS of the folder `depth` levels down `parts`: "" or ending in "/"."""
    return "".join(f"{part}/" for part in parts[:depth])


def _builds(objects: Objects, keys: list[str]) -> dict[str, list[Build]]:
    """The documentation builds rooted at each folder of the listing, by the folder's path, as the walk tells them."""
    names: dict[str, set[str]] = {}
    for relative in keys:
        parts = relative.split("/")
        for depth in range(len(parts)):
            names.setdefault(_folder(parts, depth), set()).add(parts[depth])
    every = frozenset(keys)
    return {
        folder: found
        for folder, entries in names.items()
        if (found := recognise(_Folder(objects, every, folder), folder, entries))
    }


@dataclass(frozen=True)
class _Folder:
    """A folder of the listing (`prefix`, "" or ending in "/"), as `generated.recognise` reads one."""

    objects: Objects
    keys: frozenset[str]
    prefix: str

    def head(self, path: str, size: int) -> bytes | None:
        return self.objects.head(self.prefix + path, size) if self.is_file(path) else None

    def is_file(self, path: str) -> bool:
        return self.prefix + path in self.keys


def _failure(location: Location, exc: OSError) -> str:
    """One line for a listing refused: S3 answers a request without credentials as one denied."""
    if "ACCESS_DENIED" in str(exc):
        return (
            f"Listing DOCS {location} was denied (AccessDenied): no credentials were found, or the ones in use may "
            "not list it: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or a role allowed "
            "s3:ListBucket and s3:GetObject on the prefix (docs/object-storage.md)."
        )
    said = storage.failure(location, exc, "list")
    return said or f"Could not list DOCS {location} ({' '.join(str(exc).split())[:_MESSAGE]})."


def _excluded(parts: list[str], exclude: Sequence[str]) -> Excluded | None:
    """What leaves out the object at `parts`: a pattern matching one of its folders (outermost first), or it."""
    if not exclude:
        return None
    for depth in range(1, len(parts) + 1):
        relative, is_dir = "/".join(parts[:depth]), depth < len(parts)
        if pattern := excluded_by(relative, parts[depth - 1], is_dir, exclude):
            return Excluded(relative, pattern)
    return None
