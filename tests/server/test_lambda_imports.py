"""Cold start: importing the Lambda handler loads neither LanceDB nor openai (each costs seconds)."""

import json
import subprocess
import sys

HEAVY = ["lancedb", "lance", "openai", "pyarrow", "pandas", "keyring"]


def test_importing_the_handler_leaves_the_heavy_modules_unloaded():
    probe = (
        "import json, sys\n"
        "import lancelot_server.lambda_handler as h\n"
        "assert callable(h.handler)\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout) == []
