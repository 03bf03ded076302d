"""What a run of the suite builds once, however many pytest-xdist workers share it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder `build(folder)` fills once per run, however many workers ask (pytest-xdist): the first to ask
    builds it under a lock in the run's temporary folder, the others wait for it and share it. Read-only for
    the tests, as any session fixture's."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    import fcntl  # POSIX: the suite runs its workers on Linux and macOS

    folder = tmp_path_factory.getbasetemp().parent / name  # the folder the workers' own ones are in
    with (folder.parent / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder.parent / f"{name}.built").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a worker that failed half-way
            folder.mkdir()
            build(folder)
            (folder.parent / f"{name}.built").touch()
    return folder
