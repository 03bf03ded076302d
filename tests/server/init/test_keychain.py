"""Where lancelot-init keeps the key: a real keyring backend, or the encrypted file when none is usable.

The keychain is keyrings.alt's file backend, chosen with PYTHON_KEYRING_BACKEND and kept under a
temporary XDG_DATA_HOME; "no usable keychain" is keyring's own `fail` backend.
"""

import base64
import stat
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
KEY = "sk-proj-keychain0123456789abcdef"
ALT_FILE = "keyrings.alt.file.PlaintextKeyring"
FAIL = "keyring.backends.fail.Keyring"


@pytest.fixture
def home(clean_env):
    """Settings and keyring data under tmp_path; no keyring backend chosen yet."""
    return {name: value for name, value in clean_env.items() if name != "PYTHON_KEYRING_BACKEND"}


def run(environ, *args, stdin=""):
    result = subprocess.run(args, input=stdin, env=environ, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def init(environ, *args, stdin=""):
    return run(environ, BIN / "lancelot-init", *args, stdin=stdin)


def python(environ, code):
    return run(environ, sys.executable, "-c", code)


LOAD = "import os; from lancelot_schema.settings import load; s = load(os.environ); print(s.api_key, *s.warnings)"
IN_KEYRING = "import keyring; print(keyring.get_password('lancelot', 'OPENAI_API_KEY'))"


def settings_dir(environ):
    return Path(environ["XDG_CONFIG_HOME"]) / "lancelot"


def keyring_file(environ):
    return Path(environ["XDG_DATA_HOME"]) / "python_keyring" / "keyring_pass.cfg"


def test_with_a_keychain_the_key_goes_there_and_nowhere_else(home):
    environ = home | {"PYTHON_KEYRING_BACKEND": ALT_FILE}
    init(environ, "--api-key-stdin", stdin=KEY)

    assert python(environ, IN_KEYRING) == KEY
    assert keyring_file(environ).exists()
    assert not (settings_dir(environ) / "api-key.enc").exists()
    assert KEY not in (settings_dir(environ) / "settings.json").read_text(encoding="utf-8")
    shown = init(environ, "--show")
    assert f"sk-…{KEY[-4:]}, in the keychain ({ALT_FILE}, service 'lancelot')" in shown
    assert python(environ, LOAD) == KEY


def test_forget_removes_the_key_from_the_keychain(home):
    environ = home | {"PYTHON_KEYRING_BACKEND": ALT_FILE}
    init(environ, "--api-key-stdin", stdin=KEY)
    init(environ, "--forget")
    assert python(environ, IN_KEYRING) == "None"
    assert not settings_dir(environ).exists()


def test_without_a_keychain_the_key_round_trips_through_a_private_encrypted_file(home):
    environ = home | {"PYTHON_KEYRING_BACKEND": FAIL}
    init(environ, "--api-key-stdin", stdin=KEY)

    directory = settings_dir(environ)
    sealed = directory / "api-key.enc"
    assert stat.S_IMODE(sealed.stat().st_mode) == 0o600
    assert stat.S_IMODE((directory / "settings.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    content = sealed.read_bytes()
    assert KEY.encode() not in content
    assert base64.b64encode(KEY.encode()) not in content
    assert f"encrypted in {sealed}" in init(environ, "--show")
    assert python(environ, LOAD) == KEY


def test_a_backend_keyring_does_not_recommend_is_not_used_unless_chosen(home):
    # keyrings.alt is installed here, so keyring picks its plain-text file on its own; we do not.
    init(home, "--api-key-stdin", stdin=KEY)
    assert (settings_dir(home) / "api-key.enc").exists()
    assert not keyring_file(home).exists()
    assert python(home, LOAD) == KEY


def test_moving_the_key_between_places_leaves_no_old_copy(home):
    init(home | {"PYTHON_KEYRING_BACKEND": FAIL}, "--api-key-stdin", stdin=KEY)
    keychain = home | {"PYTHON_KEYRING_BACKEND": ALT_FILE}
    init(keychain, "--api-key-stdin", stdin=KEY + "2")
    assert not (settings_dir(home) / "api-key.enc").exists()
    assert python(keychain, LOAD) == KEY + "2"
    init(keychain, "--no-api-key")
    assert python(keychain, IN_KEYRING) == "None"
    assert python(keychain, LOAD) == "None"


def test_a_keychain_that_cannot_be_read_warns_and_the_environment_still_applies(home):
    init(home | {"PYTHON_KEYRING_BACKEND": ALT_FILE}, "--api-key-stdin", stdin=KEY)
    environ = home | {"PYTHON_KEYRING_BACKEND": FAIL, "LANCEDB_PATH": "/env/db"}
    out = python(environ, LOAD + "; print(s.db_path)")
    assert out.startswith("None ")
    assert FAIL in out and "lancelot-init --forget" in out
    assert out.endswith("/env/db")
    assert "cannot be read" in init(environ, "--show")
