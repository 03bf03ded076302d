"""Lambda's init phase: Lance is imported there only when Lambda runs it ahead of any request."""

import json
import os
import subprocess
import sys

import pytest

PROBE = (
    "import json, sys\n"
    "import lancelot_server.lambda_handler\n"
    "print(json.dumps([name for name in ('lance', 'lancedb', 'openai') if name in sys.modules]))\n"
)


@pytest.mark.parametrize(
    ("initialization", "loaded"),
    [("provisioned-concurrency", ["lance"]), ("snap-start", ["lance"]), ("on-demand", []), (None, [])],
)
def test_lance_is_imported_in_the_init_phase_only_ahead_of_requests(initialization, loaded):
    env = {k: v for k, v in os.environ.items() if k != "AWS_LAMBDA_INITIALIZATION_TYPE"}
    if initialization is not None:
        env["AWS_LAMBDA_INITIALIZATION_TYPE"] = initialization
    command = [sys.executable, "-c", PROBE]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True, env=env)
    assert json.loads(out.stdout) == loaded
