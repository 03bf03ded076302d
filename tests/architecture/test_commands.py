"""Every command installs, answers --help and --version."""

import subprocess
import sys
from pathlib import Path

import pytest

import lancelot_indexer
import lancelot_schema
import lancelot_server

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("command", ["lancelot", "lancelot-index", "lancelot-init"])
def test_command_answers_help(command):
    out = subprocess.run([BIN / command, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Usage:" in out.stdout


@pytest.mark.parametrize("command", ["lancelot", "lancelot-index", "lancelot-init"])
def test_command_answers_version(command):
    out = subprocess.run([BIN / command, "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert lancelot_server.__version__ in out.stdout


def test_the_three_distributions_share_one_version():
    assert lancelot_schema.__version__ == lancelot_indexer.__version__ == lancelot_server.__version__
