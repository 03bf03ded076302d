"""`settings.load`: the one call `lancelot` and `lancelot-index` make to read what lancelot-init stored."""

import json
import os
import subprocess
import sys

import pytest

from lancelot_schema import credentials
from lancelot_schema.settings import load

KEY = "sk-proj-stored0123456789abcdef"


@pytest.fixture
def environ(tmp_path):
    """An environment with only a temporary configuration home: never the real user's settings."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}


def store(environ, values, key=None):
    """What lancelot-init leaves behind: the settings file and, when given, the encrypted key."""
    directory = os.path.join(environ["XDG_CONFIG_HOME"], "lancelot")
    os.makedirs(directory, exist_ok=True)
    if key is not None:
        with open(os.path.join(directory, credentials.KEY_FILE), "wb") as handle:
            handle.write(credentials.seal(key))
        values = values | {credentials.STORE_FIELD: credentials.IN_FILE}
    with open(os.path.join(directory, "settings.json"), "w", encoding="utf-8") as handle:
        json.dump(values, handle)
    return directory


def test_nothing_stored_gives_the_defaults(environ):
    s = load(environ)
    assert (s.db_path, s.table, s.api_key, s.warnings) == (None, "documents", None, ())
    assert s.origins["LANCEDB_TABLE"] == "default"


def test_stored_values_fill_what_the_environment_leaves_unset(environ):
    store(environ, {"LANCEDB_PATH": "/kept/db", "LANCEDB_TABLE": "kept"}, key=KEY)
    s = load(environ)
    assert (s.db_path, s.table, s.api_key) == ("/kept/db", "kept", KEY)
    assert s.origins["LANCEDB_PATH"] == s.origins["OPENAI_API_KEY"] == "stored"
    assert s.text_column == "text" and s.origins["LANCEDB_TEXT_COLUMN"] == "default"


def test_the_environment_wins_over_what_is_stored(environ):
    store(environ, {"LANCEDB_PATH": "/kept/db", "LANCEDB_TABLE": "kept"}, key=KEY)
    s = load(environ | {"LANCEDB_PATH": "/env/db", "OPENAI_API_KEY": "sk-from-environment-0123456789"})
    assert (s.db_path, s.table, s.api_key) == ("/env/db", "kept", "sk-from-environment-0123456789")
    assert s.origins["OPENAI_API_KEY"] == "environment"


@pytest.mark.parametrize("blank", ["", "  ", "\t\n"])
def test_a_blank_variable_lets_the_stored_value_through(environ, blank):
    store(environ, {"LANCEDB_PATH": "/kept/db"}, key=KEY)
    s = load(environ | {"LANCEDB_PATH": blank, "OPENAI_API_KEY": blank})
    assert (s.db_path, s.api_key) == ("/kept/db", KEY)


def test_a_damaged_settings_file_warns_and_the_environment_still_applies(environ):
    directory = store(environ, {})
    path = os.path.join(directory, "settings.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("{damaged")
    s = load(environ | {"LANCEDB_PATH": "/env/db"})
    assert s.db_path == "/env/db" and s.table == "documents"
    (warning,) = s.warnings
    assert path in warning and "lancelot-init --forget" in warning


def test_an_unreadable_key_file_warns_and_the_rest_still_applies(environ):
    directory = store(environ, {"LANCEDB_PATH": "/kept/db"}, key=KEY)
    with open(os.path.join(directory, credentials.KEY_FILE), "wb") as handle:
        handle.write(credentials.seal(KEY, identity=b"another machine"))
    s = load(environ)
    assert s.db_path == "/kept/db" and s.api_key is None
    (warning,) = s.warnings
    assert credentials.KEY_FILE in warning and "lancelot-init --forget" in warning


def test_a_key_in_the_environment_skips_the_stored_one_and_its_problems(environ):
    directory = store(environ, {}, key=KEY)
    os.remove(os.path.join(directory, credentials.KEY_FILE))
    s = load(environ | {"OPENAI_API_KEY": "sk-from-environment-0123456789"})
    assert s.warnings == ()


def run_load(environ, code):
    """`load(os.environ)` in a fresh interpreter, as an entry point calls it; prints what `code` says."""
    script = f"import os, sys\nfrom lancelot_schema.settings import load\ns = load(os.environ)\n{code}"
    env = {"PATH": os.environ.get("PATH", ""), **environ}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_with_a_key_in_the_environment_keyring_is_never_imported(environ):
    store(environ, {credentials.STORE_FIELD: credentials.IN_KEYRING})
    env = environ | {"OPENAI_API_KEY": "sk-from-environment-0123456789"}
    assert run_load(env, "print('keyring' in sys.modules, s.warnings)") == "False ()"


def test_with_no_key_stored_keyring_is_never_imported(environ):
    store(environ, {"LANCEDB_PATH": "/kept/db"})
    assert run_load(environ, "print('keyring' in sys.modules, 'cryptography' in sys.modules)") == "False False"


def test_an_unusable_keychain_warns_with_the_backend_and_the_fix(environ):
    store(environ, {"LANCEDB_PATH": "/kept/db", credentials.STORE_FIELD: credentials.IN_KEYRING})
    env = environ | {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", "LANCEDB_TABLE": "t"}
    out = run_load(env, "print(s.db_path, s.table, s.api_key); print(*s.warnings)")
    first, warning = out.split("\n", 1)
    assert first == "/kept/db t None"
    assert "keyring.backends.fail.Keyring" in warning
    assert "lancelot-init --forget" in warning
