"""scripts/setup's choice of interpreter: python3, or the one PYTHON names."""

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_python_that_is_not_there_is_named_before_anything_is_made(tmp_path):
    # A copy of the script in an empty folder: whatever it made would be there to see.
    (tmp_path / "scripts").mkdir()
    setup = shutil.copy(ROOT / "scripts" / "setup", tmp_path / "scripts" / "setup")
    missing = tmp_path / "no-such" / "python3.12"
    environ = {"PATH": "/usr/bin:/bin", "PYTHON": str(missing)}
    done = subprocess.run([setup], env=environ, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == (
        f"scripts/setup: there is no {missing}: install Python 3.11 or newer, or name one: "
        "PYTHON=/path/to/python3.12 scripts/setup\n"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["scripts"]
