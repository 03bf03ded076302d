"""The server's shape: a short top level, and no import cycle anywhere in it.

The import contracts in pyproject.toml (`lint-imports`) hold the layers; this checks the two numbers the
layout promises from the import graph itself, the one import-linter reads (grimp, which it ships).
"""

from __future__ import annotations

from pathlib import Path

import grimp

import lancelot_server

SERVER = Path(lancelot_server.__file__).parent
TOP_LEVEL_LIMIT = 12


def cycles(package: str) -> dict[str, set[tuple[str, str]]]:
    """For `package` and every package inside it: the imports that would have to go for its children (modules
    and subpackages, each taken whole) to import one another without a cycle. Empty: no cycle anywhere."""
    graph = grimp.build_graph(package, cache_dir=None)
    found = {}
    for parent in sorted({package} | {name for name in graph.modules if graph.find_children(name)}):
        breakers = graph.nominate_cycle_breakers(parent)
        if breakers:
            found[parent] = breakers
    return found


def test_the_server_keeps_at_most_twelve_modules_at_its_top_level():
    modules = sorted(path.name for path in SERVER.glob("*.py"))
    assert "lambda_handler.py" in modules  # Dockerfile.lambda names lancelot_server.lambda_handler.handler
    assert len(modules) <= TOP_LEVEL_LIMIT, modules


def test_the_server_has_no_import_cycle():
    assert cycles("lancelot_server") == {}


def test_the_cycle_check_finds_a_cycle_between_subpackages_and_within_one(tmp_path, monkeypatch):
    root = tmp_path / "circle"
    files = {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/one.py": "from circle.b import two\n",
        "b/__init__.py": "",
        "b/two.py": "from circle.b import three\n",
        "b/three.py": "import circle.a.one\nfrom circle.b import two\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = cycles("circle")
    assert set(found) == {"circle", "circle.b"}
    assert found["circle.b"] <= {("circle.b.two", "circle.b.three"), ("circle.b.three", "circle.b.two")}
