"""scripts/test's tiers: the tests that install from the package index are run from where it looks for them."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDER = "tests/docs"


def marked_installs(path: Path) -> bool:
    """Whether a test module marks anything `installs` (a decorator or a module's pytestmark)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "installs":
            value = node.value
            if isinstance(value, ast.Attribute) and value.attr == "mark":
                return True
    return False


def test_every_installs_test_is_where_scripts_test_collects_that_tier():
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    assert f"pytest {FOLDER} -m installs" in script
    modules = (ROOT / "tests").rglob("test_*.py")
    marked = sorted(str(path.relative_to(ROOT)) for path in modules if marked_installs(path))
    assert marked, "no test is marked installs: the tier would run nothing"
    assert [path for path in marked if not path.startswith(f"{FOLDER}/")] == []


def test_a_mark_is_found_as_a_decorator_and_as_pytestmark(tmp_path):
    decorated = tmp_path / "test_a.py"
    decorated.write_text("import pytest\n\n@pytest.mark.installs\ndef test_x():\n    pass\n", encoding="utf-8")
    module = tmp_path / "test_b.py"
    module.write_text("import pytest\n\npytestmark = [pytest.mark.slow, pytest.mark.installs]\n", encoding="utf-8")
    unmarked = tmp_path / "test_c.py"
    unmarked.write_text("import pytest\n\n@pytest.mark.slow\ndef test_installs():\n    pass\n", encoding="utf-8")
    assert [marked_installs(path) for path in (decorated, module, unmarked)] == [True, True, False]
