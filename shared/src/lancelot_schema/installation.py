"""How this installation was made, so that a command a person is told to run works where they are.

    installed_from("lancelot-server") -> "file:///home/you/lancelot/server" | None (a package index)
    local_folder("file:///home/you/lancelot/server") -> Path("/home/you/lancelot/server")
    clone_of("lancelot-indexer") -> Path("/home/you/lancelot") when installed from a clone's folder
    under_uvx() -> True in one of uvx's throw-away environments

Read when a message or a client configuration is written, never at import.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
import urllib.request
from importlib import metadata
from pathlib import Path


def installed_from(distribution: str) -> str | None:
    """The URL `distribution` was installed from when that was not a package index (a folder, an archive,
    a repository), from the PEP 610 record pip and uv leave; None for an index, or when it is not installed."""
    try:
        record = metadata.distribution(distribution).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not record:
        return None
    try:
        url = json.loads(record).get("url")
    except ValueError:
        return None
    return url if isinstance(url, str) and url else None


def local_folder(url: str | None) -> Path | None:
    """The folder a `file:` URL names, if it is one that exists."""
    if url is None or not url.startswith("file:"):
        return None
    folder = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
    return folder if folder.is_dir() else None


def clone_of(distribution: str) -> Path | None:
    """The clone of Lancelot's repository `distribution` was installed from (by scripts/install, pip, pipx
    or uv from its folder there), where scripts/install can add to it; None otherwise."""
    folder = local_folder(installed_from(distribution))
    if folder is None or not (folder.parent / "scripts" / "install").is_file():
        return None
    return folder.parent


def under_uvx(prefix: str | None = None) -> bool:
    """Whether the running environment is one uvx made in uv's cache (gone with `uv cache clean`), as
    opposed to a lasting one: a venv, `uv tool install`'s, pipx's. uv marks its cache folder, not the
    environments under it, with CACHEDIR.TAG; a project's .venv carries its own tag but lies outside."""
    environment = Path(sys.prefix if prefix is None else prefix)
    if "uv = " not in _pyvenv_cfg(environment):
        return False
    return any((folder / "CACHEDIR.TAG").is_file() for folder in environment.parents)


def _pyvenv_cfg(environment: Path) -> str:
    try:
        return (environment / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return ""
