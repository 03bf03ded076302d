"""The suite hands out the modules marked `waits` first, whole, and the rest in the order collected."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def collected(*modules: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0", *modules],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line.split("::")[0] for line in done.stdout.splitlines() if "::" in line]


def test_a_module_marked_waits_comes_first_whole_and_the_others_keep_their_order():
    # Collected in this order, alphabetically; only test_tokens is marked.
    oauth, tokens = "tests/server/auth/test_oauth.py", "tests/server/auth/test_tokens.py"
    arguments = "tests/server/test_arguments.py"
    modules = collected(oauth, tokens, arguments)
    order = [module for number, module in enumerate(modules) if number == 0 or modules[number - 1] != module]
    assert order == [tokens, oauth, arguments]
