"""Find the documents under DOCS: sorted, no dot names, symlinks only when they stay inside DOCS.

walk(root, exclude=("*.min.html",)) -> Found | Skipped | Excluded | Duplicate | Generated, in path order

The pages a documentation generator made (indexes, search pages, copies of sources) are Generated, not
Found, below the root of each build recognised on the way (`generated.py`), unless `leave_generated` is off.

Files and folders are known by (device, inode), not by path: a file reached by several paths (links,
hard links) is found once, under its first path in this order, and a folder already walked is not
walked again. Links can make the number of paths grow exponentially without a loop (a folder with two
links to the next one, a few levels deep), so the paths under a folder walked before are never listed.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Protocol

from lancelot_indexer.documents.generated import Build, Generated, kind_of, recognise
from lancelot_indexer.readers.formats import ENDINGS


class Store(Protocol):
    """Where a document's bytes are when they are not in a file here: a bucket (`bucket.Objects`)."""

    def read(self, relative: str) -> bytes: ...


@dataclass(frozen=True)
class Found:
    """A document to read: its absolute path and its path relative to DOCS, with forward slashes; on a bucket,
    `store` holds it and `path` is only `relative` (its name and suffix say its format)."""

    path: Path
    relative: str
    store: Store | None = None


@dataclass(frozen=True)
class Skipped:
    """A file or folder that was not used, and why (shown in the summary)."""

    relative: str
    reason: str


@dataclass(frozen=True)
class Excluded:
    """A file or folder left out because an `--exclude` pattern matched it (a folder is not entered)."""

    relative: str
    pattern: str


def excluded_by(relative: str, name: str, is_dir: bool, patterns: Sequence[str]) -> str | None:
    """The first pattern matching the path relative to DOCS or the bare name; `*` also crosses `/`.

    Written as people write them elsewhere: a leading `./` is ignored, and a trailing `/` (gitignore's
    way of naming a folder) matches folders only.
    """
    for pattern in patterns:
        glob = pattern.removeprefix("./")
        if glob.endswith("/"):
            if not is_dir:
                continue
            glob = glob.rstrip("/")
        if fnmatchcase(relative, glob) or fnmatchcase(name, glob):
            return pattern
    return None


EXTENSIONS = frozenset(ENDINGS)


def is_document(name: str) -> bool:
    return Path(name).suffix.lower() in EXTENSIONS


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


@dataclass(frozen=True)
class Duplicate:
    """A file or folder left out because it was already found under another path (`first`)."""

    relative: str
    first: str


Item = Found | Skipped | Excluded | Duplicate | Generated
# A file's or folder's identity whatever the path to it: (st_dev, st_ino).
_Key = tuple[int, int]


def walk(
    root: Path, exclude: Sequence[str] = (), ignored: Counter[str] | None = None, *, leave_generated: bool = True
) -> Iterator[Item]:
    """Every document under `root` in a stable order, every link that was refused, what `exclude` left out,
    every file or folder left out because it was found before under another path, and every generated page
    of a documentation build (with `leave_generated`). `ignored` counts the other files, by suffix (lower
    case; "" for none), for a run that finds no document to say what it saw."""
    top = _key(root.stat())
    seen = _Seen(folders={top: "."}, files={}, ignored=Counter() if ignored is None else ignored)
    builds = () if leave_generated else None  # None: no build is recognised
    yield from _walk_dir(root, "", root.resolve(), frozenset({top}), tuple(exclude), seen, builds)


@dataclass(frozen=True)
class _Seen:
    """The path each folder was walked under and each document found under, by key; the other files by suffix."""

    folders: dict[_Key, str]
    files: dict[_Key, str]
    ignored: Counter[str]


def _walk_dir(
    folder: Path,
    prefix: str,
    real_root: Path,
    ancestors: frozenset[_Key],
    exclude: tuple[str, ...],
    seen: _Seen,
    builds: tuple[Build, ...] | None,
) -> Iterator[Item]:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        yield Skipped(prefix.rstrip("/") or ".", f"unreadable folder: {exc.strerror}")
        return
    if builds is not None:
        builds = (*builds, *recognise(folder, prefix, {entry.name for entry in entries}))
    for entry in entries:
        if entry.name.startswith("."):
            continue
        relative = prefix + entry.name
        if exclude and (pattern := excluded_by(relative, entry.name, _is_dir(entry), exclude)):
            yield Excluded(relative, pattern)
            continue
        path = Path(entry.path)
        if not _utf8(entry.name):
            # Paths are stored as UTF-8 text; such a name (from an old archive, say) cannot be one.
            if is_document(entry.name) or _is_dir(entry):
                yield Skipped(_shown(relative), "name is not valid UTF-8; rename it to index it")
            continue
        if entry.is_symlink():
            try:
                target = path.resolve(strict=True)
            except (OSError, RuntimeError):
                # RuntimeError: a symlink loop on Python versions that raise it. Only a link named like a
                # document is worth a line: Sphinx's _static/jquery.js would be skipped anyway.
                if is_document(entry.name):
                    yield Skipped(relative, "broken or looping symlink")
                continue
            if not _inside(target, real_root):
                if target.is_dir() or is_document(entry.name):
                    yield Skipped(relative, "symlink leads outside the documents folder")
                continue
        if _is_dir(entry):
            key = _entry_key(entry)
            if key in ancestors:
                yield Skipped(relative, "symlink loop")
            elif key in seen.folders:
                yield Duplicate(relative, seen.folders[key])
            else:
                inside = ancestors
                if key is not None:
                    seen.folders[key] = relative
                    inside = ancestors | {key}
                yield from _walk_dir(path, relative + "/", real_root, inside, exclude, seen, builds)
        elif is_document(entry.name):
            # A pipe or device named like a document would block or never end when read.
            if not entry.is_file():
                yield Skipped(relative, "not a regular file")
            elif builds and (made := kind_of(builds, relative)):
                yield Generated(relative, made[0].generator.name, made[1])
            elif (key := _entry_key(entry)) in seen.files:
                yield Duplicate(relative, seen.files[key])
            else:
                if key is not None:
                    seen.files[key] = relative
                yield Found(path, relative)
        elif entry.is_file():
            seen.ignored[path.suffix.lower()] += 1


def _key(stat: os.stat_result) -> _Key:
    return stat.st_dev, stat.st_ino


def _entry_key(entry: os.DirEntry[str]) -> _Key | None:
    """The key of what the entry leads to; None when it vanished meanwhile (reading it will say so)."""
    try:
        return _key(entry.stat())
    except OSError:
        return None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(relative: str) -> str:
    """A path with undecodable bytes shown as U+FFFD, printable and storable."""
    return relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
