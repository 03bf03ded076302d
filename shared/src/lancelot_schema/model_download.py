"""Fetch a known local model into the cache: every file checked against its SHA-256 before the folder appears.

    fetch(spec, where, say) -> Found      # LocalModelError when a file cannot be had or is not the one expected

The files go into a hidden folder beside the cache's model folder, which is renamed into place once every file
has its size and checksum: a stopped or failed download never leaves a model folder that looks complete, and a
file that fails its check is deleted at once. `say` gets one progress line per file (and its end), for stderr.
Only the standard library: the indexer and (when asked) the server fetch with it.
"""

from __future__ import annotations

import hashlib
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from lancelot_schema.local_models import Found, LocalModelError, Spec, Where, missing, read_folder

CHUNK = 1 << 20
TIMEOUT_S = 30.0


def fetch(spec: Spec, where: Where, say: Callable[[str], None], *, indexing: bool = False) -> Found:
    """Download `spec`'s files from LANCELOT_EMBED_MODEL_URL (or the model's home) into the cache; `indexing`:
    for lancelot-index's wording of a failure."""
    if where.cache is None or not spec.files:
        raise LocalModelError(missing(spec.name, where, indexing=indexing))
    base = (where.url or spec.home or "").rstrip("/")
    target = where.cache / spec.name
    partial = where.cache / f".{spec.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)  # what an earlier, stopped download left
    partial.mkdir(parents=True, exist_ok=True)
    try:
        for name, sha256, size in spec.files:
            try:
                _one(f"{base}/{name}", partial / name, sha256, size, spec.name, say)
            except _Unreachable as exc:
                raise LocalModelError(missing(spec.name, where, failed=str(exc), indexing=indexing)) from None
        shutil.rmtree(target, ignore_errors=True)
        partial.replace(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return read_folder(target, "the model cache")


class _Unreachable(Exception):
    """A file that could not be fetched: the message says why, for `missing`."""


def _one(url: str, path: Path, sha256: str, size: int, model: str, say: Callable[[str], None]) -> None:
    say(f"Downloading {model}: {path.name} ({size / 1e6:.1f} MB) from {url}")
    digest = hashlib.sha256()
    got = 0
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer, path.open("wb") as out:  # noqa: S310
            while block := answer.read(CHUNK):
                got += len(block)
                if got > size:
                    break
                digest.update(block)
                out.write(block)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        path.unlink(missing_ok=True)
        raise _Unreachable(f"{path.name}: {_reason(exc)}") from None
    if got != size or digest.hexdigest() != sha256:
        path.unlink(missing_ok=True)
        found = f"{got} bytes" if got != size else f"SHA-256 {digest.hexdigest()}"
        raise LocalModelError(
            f"the download of {model}'s {path.name} from {url} is not the published file ({found}, expected "
            f"{size} bytes with SHA-256 {sha256}); the partial file was deleted. Check LANCELOT_EMBED_MODEL_URL, "
            "or provide the folder yourself (LANCELOT_EMBED_MODEL_PATH)"
        )
    say(f"Downloaded {model}: {path.name}, SHA-256 checked")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__
