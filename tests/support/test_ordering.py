"""The suite hands out the modules marked `waits` first, whole, then the xdist groups, the largest first, then
the rest in the order collected."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules_in_order(*modules: str) -> list[str]:
    """The modules of the tests `pytest --collect-only` lists, each run of one module's tests named once."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0", *modules],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = [line.split("::")[0] for line in done.stdout.splitlines() if "::" in line]
    return [module for number, module in enumerate(found) if number == 0 or found[number - 1] != module]


def test_waiting_modules_come_first_then_the_largest_group_then_the_rest():
    # Collected in the order named; test_tokens is marked `waits`, test_read's tests share a group of 52 and
    # test_serve_shutdown's one of 3 (in this selection), test_arguments has no group.
    tokens, shutdown = "tests/server/auth/test_tokens.py", "tests/server/http/test_serve_shutdown.py"
    read, arguments = "tests/server/reading/test_read.py", "tests/server/test_arguments.py"
    assert modules_in_order(arguments, shutdown, read, tokens) == [tokens, read, shutdown, arguments]
