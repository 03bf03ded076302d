"""The code to compare against: a git worktree of a revision with a venv of its own.

bench-quality measures "before" and "after" in the same run, so "before" must be real code, not numbers
copied from an older run: the revision is checked out under `bench-work/quality/baseline-<commit>`
(`current-<commit>` for `--current REV`), a detached worktree that nobody edits, and installed with the
repository's uv from its own `uv.lock` (`uv sync --frozen --all-packages`, fast from uv's cache), or with
pip when either is missing. Without `--current`, the current side is the working tree and its .venv.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from bench.common import BIN, ROOT


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a name for the table, its source tree and its venv's bin folder; `flags`: the
    lancelot-index flags it indexes with in place of a set's --exclude patterns (None: those patterns)."""

    name: str
    commit: str
    tree: Path
    bin: Path
    flags: tuple[str, ...] | None = None
    local: str | None = None  # a local model's folder: vectors from `--embed local:FOLDER`, not the endpoint


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _dirty() -> bool:
    return bool(_git("status", "--porcelain", "--", "shared", "indexer", "server", "uv.lock"))


def current() -> Side:
    """The working tree and its .venv (set up by scripts/setup); the commit says `+dirty` when the
    distributions' sources differ from HEAD, as they may while others work."""
    commit = _git("rev-parse", "--short", "HEAD")
    return Side("current", commit + ("+dirty" if _dirty() else ""), ROOT, BIN)


def recheck(side: Side) -> Side:
    """`side` after the run: the working tree may have moved or changed under it while it ran."""
    if side.tree != ROOT:
        return side
    now = current()
    if now.commit == side.commit:
        return side
    return replace(side, commit=f"{side.commit}, {now.commit} at the end")


def variant(side: Side, flags: str) -> Side:
    """`side`'s code indexing with `flags` (split as a shell would not: on spaces) in place of a set's --exclude
    patterns, named after them."""
    return Side(f"{side.name} [{flags or 'no flags'}]", side.commit, side.tree, side.bin, tuple(flags.split()))


def local(side: Side, folder: Path, *, named: bool = False) -> Side:
    """`side`'s code with its vectors from the local model in `folder` (indexed and queried with it); `named`:
    the side's name says the folder's (one side per candidate model)."""
    how = f"--embed local:{folder.name}" if named else "--embed local"
    return replace(side, name=f"{side.name} [{how}]", local=str(folder))


def newest_databases(work: Path) -> Path:
    """The folder of databases (one a corpus) that the newest current side of a run under `work` built: `current`
    for the working tree, `current-<commit>` for `--current REV`."""
    built = sorted((work / "db").glob("current*"), key=lambda path: path.stat().st_mtime)
    if not built:
        raise SystemExit(f"no databases under {work / 'db'}: run scripts/bench-quality first, or name DB_FOLDER")
    return built[-1]


def prepare(rev: str, work: Path, role: str = "baseline") -> Side:
    """A worktree of `rev` under `work` with its own venv, made or brought up to date."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    short = commit[:7]
    tree = work / f"{role}-{short}"
    if not (tree / ".git").exists():
        _git("worktree", "add", "--detach", str(tree), commit)
    elif _git("rev-parse", "HEAD", cwd=tree) != commit:
        raise SystemExit(f"{tree} is not at {commit}; remove it with `git worktree remove --force {tree}`")
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"}}
    uv = ROOT / ".tools/bin/uv"
    if uv.exists() and (tree / "uv.lock").exists():
        command = [str(uv), "sync", "--quiet", "--frozen", "--all-packages", "--python", "python3"]
        subprocess.run(command, cwd=tree, env=env, check=True)
    elif not (tree / ".venv/bin/lancelot-index").exists():
        subprocess.run(["python3", "-m", "venv", str(tree / ".venv")], check=True)
        pip = [str(tree / ".venv/bin/python"), "-m", "pip", "install", "--quiet", "./shared", "./indexer", "./server"]
        subprocess.run(pip, cwd=tree, env=env, check=True)
    return Side(f"{role} {short}", short, tree, tree / ".venv/bin")
