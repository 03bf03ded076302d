"""bench/suite_cpu.py: a test's CPU, its own and its children's, counted and summed by module."""

import subprocess
import sys
from types import SimpleNamespace

import pytest

from bench import suite_cpu


def run(nodeid: str, body) -> None:
    """One test through the plugin's wrapper of pytest's run protocol, as pytest drives it."""
    protocol = suite_cpu.pytest_runtest_protocol(SimpleNamespace(nodeid=nodeid), None)
    next(protocol)
    body()
    with pytest.raises(StopIteration):
        protocol.send(True)


def test_a_tests_children_are_counted_in_it_and_summed_in_its_module(tmp_path, monkeypatch):
    monkeypatch.setattr(suite_cpu, "FOLDER", tmp_path)
    child = [sys.executable, "-c", "sum(i * i for i in range(3_000_000))"]
    run("tests/a/test_x.py::test_one", lambda: subprocess.run(child, check=True))
    run("tests/b/test_y.py::test_two", lambda: None)
    found = suite_cpu.rows(tmp_path)
    assert [row[0] for row in found] == ["tests/a/test_x.py::test_one", "tests/b/test_y.py::test_two"]
    assert found[0][2] > 0.05 and found[1][2] == 0  # the child's CPU, in the test that waited for it
    modules = suite_cpu.by_module(found)
    assert [(module, count) for module, *_, count in modules] == [("tests/a/test_x.py", 1), ("tests/b/test_y.py", 1)]
    assert modules[0][2] == found[0][2]
