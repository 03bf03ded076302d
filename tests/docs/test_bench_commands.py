"""The benchmark commands that docs, launchers and docstrings name exist: `python -m bench.NAME`, `bench/NAME.py`."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAUNCHERS = sorted((ROOT / "scripts").glob("bench-*"))
BENCH = sorted((ROOT / "bench").rglob("*.py"))
NAMING = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *LAUNCHERS, *BENCH]


def _named(pattern: str) -> set[str]:
    return {found for path in NAMING for found in re.findall(pattern, path.read_text(encoding="utf-8"))}


def test_every_bench_module_named_exists():
    modules = _named(r"python\s+-m\s+(bench(?:\.[a-z_][a-z_0-9]*)*)")  # not bench.NAME, a placeholder
    assert {"bench.search", "bench.quality", "bench.quality.fusion_grid"} <= modules
    assert [module for module in sorted(modules) if importlib.util.find_spec(module) is None] == []


def test_every_bench_file_named_exists():
    files = _named(r"\bbench/[\w/]+\.(?:py|json)\b")
    assert "bench/quality/queries.json" in files
    assert [name for name in sorted(files) if not (ROOT / name).is_file()] == []


def test_nothing_names_the_benchmarks_where_they_were():
    places = [*NAMING, *sorted((ROOT / "server").rglob("*.py")), *sorted((ROOT / "indexer").rglob("*.py"))]
    stale = [path for path in places if re.search(r"scripts/(bench_\w+\.py|quality/)", path.read_text("utf-8"))]
    assert stale == []


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=lambda path: path.name)
def test_each_launcher_runs_a_bench_module(launcher):
    modules = re.findall(r"^\s*exec \.venv/bin/python -m (bench\.\w+)", launcher.read_text("utf-8"), re.MULTILINE)
    assert modules, f"{launcher.name} runs no bench module"
    assert all(importlib.util.find_spec(module) is not None for module in modules)


def test_the_benchmarks_are_a_package_without_path_edits():
    edits = [path for path in BENCH if "sys.path" in path.read_text(encoding="utf-8")]
    assert edits == []
