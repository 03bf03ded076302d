"""lancelot-init as a person and a script use it: a real terminal (pexpect) and real processes."""

import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import lancedb
import pexpect
import pytest

BIN = Path(sys.executable).parent
KEY = "sk-proj-test0123456789abcdefXYZ"

# pexpect forks this process to exec lancelot-init at once; lance (loaded by the fixtures) warns on
# any fork, though nothing of it runs in the child before exec.
pytestmark = pytest.mark.filterwarnings("ignore:lance is not fork-safe:UserWarning")


@pytest.fixture
def env(clean_env):
    return clean_env


@pytest.fixture
def db(tmp_path):
    """A real LanceDB database with two tables."""
    path = tmp_path / "db"
    connection = lancedb.connect(path)
    for name in ("documents", "notes"):
        connection.create_table(name, data=[{"id": "a#0", "text": "hello"}])
    return path


def settings_dir(env):
    return Path(env["XDG_CONFIG_HOME"]) / "lancelot"


def stored_settings(env):
    return json.loads((settings_dir(env) / "settings.json").read_text(encoding="utf-8"))


def init(env, *args, stdin=""):
    return subprocess.run(
        [BIN / "lancelot-init", *args], input=stdin, env=env, capture_output=True, text=True, timeout=60
    )


def converse(env, *steps):
    """Run lancelot-init on a real terminal: for each (prompt, answer) wait for the prompt, then type the
    answer (None: type nothing). Returns everything the terminal showed and the exit status."""
    child = pexpect.spawn(str(BIN / "lancelot-init"), env=env, encoding="utf-8", timeout=30)
    child.logfile_read = io.StringIO()
    for prompt, answer in steps:
        child.expect(prompt)
        if answer is not None:
            child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    return child.logfile_read.getvalue(), child.exitstatus


def tree_digest(path: Path) -> str:
    digest = hashlib.sha256()
    for item in sorted(path.rglob("*")):
        digest.update(str(item.relative_to(path)).encode())
        if item.is_file():
            digest.update(item.read_bytes())
    return digest.hexdigest()


FOLDER, TABLE, KEY_PROMPT = "Database folder", "Default table", "OpenAI API key"


# The interactive flow, through a real pseudo-terminal.


def test_a_good_run_stores_the_choices_and_prints_the_client_config(env, db):
    before = tree_digest(db)
    shown, status = converse(
        env, (FOLDER, str(db)), ("Tables: documents, notes", None), (TABLE, "notes"), (KEY_PROMPT, KEY)
    )
    assert status == 0
    assert KEY not in shown
    assert "sk-…fXYZ" in shown
    # This environment's own server, by its absolute path: the command that exists here.
    assert f"claude mcp add lancelot -e LANCEDB_PATH={db} -e LANCEDB_TABLE=notes -- {BIN / 'lancelot'}" in shown
    assert f'"LANCEDB_PATH": "{db}"' in shown
    kept = stored_settings(env)
    assert kept == {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "notes", "api_key_store": "encrypted-file"}
    assert tree_digest(db) == before, "lancelot-init changed the database folder"


def test_a_wrong_folder_is_explained_and_asked_again(env, db, tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a database", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    wrong = [
        (tmp_path / "missing", "does not exist"),
        (a_file, "is a file, not a folder"),
        (tmp_path / "empty", "holds no LanceDB table"),
        (db / "notes.lance", "is one table; give the folder that holds it"),
    ]
    steps = [step for path, why in wrong for step in ((FOLDER, str(path)), (why, None))]
    _, status = converse(env, *steps, (FOLDER, str(db)), (TABLE, ""), (KEY_PROMPT, ""))
    assert status == 0
    assert stored_settings(env)["LANCEDB_TABLE"] == "documents"


def test_an_empty_key_stores_none_and_a_misshapen_one_is_asked_again(env, db):
    shown, status = converse(
        env,
        (FOLDER, str(db)),
        (TABLE, "documents"),
        (KEY_PROMPT, "not a key"),
        ("does not look like an API key", None),
        (KEY_PROMPT, ""),
    )
    assert status == 0
    assert "none stored" in shown
    assert "api_key_store" not in stored_settings(env)
    assert not (settings_dir(env) / "api-key.enc").exists()
    assert "LANCEDB_TABLE" not in shown


def test_a_database_with_one_table_is_not_asked_about(env, tmp_path):
    path = tmp_path / "single"
    lancedb.connect(path).create_table("manual", data=[{"id": "a#0", "text": "x"}])
    shown, status = converse(env, (FOLDER, str(path)), ("Table: manual", None), (KEY_PROMPT, ""))
    assert status == 0
    assert TABLE not in shown
    assert stored_settings(env)["LANCEDB_TABLE"] == "manual"


def test_a_second_run_offers_what_was_stored(env, db):
    assert init(env, "--db", str(db), "--table", "notes").returncode == 0
    _, status = converse(
        env, (f"{FOLDER} .*\\[{re.escape(str(db))}\\]", ""), (TABLE + r" .*\[notes\]", ""), (KEY_PROMPT, "")
    )
    assert status == 0
    assert stored_settings(env)["LANCEDB_TABLE"] == "notes"


# Options, as a script uses them.


def test_options_store_an_absolute_path_and_the_default_table(env, db, tmp_path):
    result = subprocess.run(
        [BIN / "lancelot-init", "--db", "db", "--no-api-key"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert stored_settings(env) == {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "documents"}
    assert f"-e LANCEDB_PATH={db} -- " in result.stdout


def test_the_key_from_stdin_is_stored_and_never_printed(env, db):
    result = init(env, "--db", str(db), "--api-key-stdin", stdin=f"  {KEY}\n")
    assert result.returncode == 0, result.stderr
    assert KEY not in result.stdout + result.stderr
    shown = init(env, "--show")
    assert shown.returncode == 0
    assert "sk-…fXYZ" in shown.stdout
    assert f"encrypted in {settings_dir(env) / 'api-key.enc'}" in shown.stdout
    assert KEY not in shown.stdout


def test_no_api_key_removes_a_stored_key_and_keeps_the_rest(env, db):
    init(env, "--db", str(db), "--table", "notes", "--api-key-stdin", stdin=KEY)
    result = init(env, "--no-api-key")
    assert result.returncode == 0, result.stderr
    assert stored_settings(env) == {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "notes"}
    assert not (settings_dir(env) / "api-key.enc").exists()


def test_table_alone_changes_the_table_of_the_stored_database(env, db):
    init(env, "--db", str(db))
    assert init(env, "--table", "notes").returncode == 0
    assert stored_settings(env)["LANCEDB_TABLE"] == "notes"


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["--db", "/no/such/folder"], "", "Invalid value for --db: /no/such/folder does not exist"),
        (["--db", "DB", "--table", "nope"], "", "has no table 'nope'; it has: documents, notes"),
        (["--api-key-stdin"], "", "Invalid value for --api-key-stdin: That does not look like an API key"),
        (["--api-key-stdin"], "sk-short", "does not look like an API key"),
        (["--api-key-stdin", "--no-api-key"], KEY, "Choose one of --api-key-stdin and --no-api-key"),
        (["--show", "--forget"], "", "--show and --forget go alone"),
        (["--table", "notes"], "", "--table needs --db"),
        ([], "", "Standard input is not a terminal"),
    ],
)
def test_mistakes_are_usage_errors_that_store_nothing(env, db, args, stdin, message):
    args = [str(db) if arg == "DB" else arg for arg in args]
    result = init(env, *args, stdin=stdin)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not settings_dir(env).exists()


def test_a_folder_of_documents_as_db_is_called_documents_with_the_commands_meant(env, tmp_path):
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "setup.md").write_text("# Setup\n", encoding="utf-8")
    result = subprocess.run(
        [BIN / "lancelot-init", "--db", "./docs"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert (
        f"Error: Invalid value for --db: {docs} holds no LanceDB table: it looks like a folder of documents. Index it "
        "into a database folder, then give that folder: `lancelot-index ./docs ./lancelot-db`, then "
        "`lancelot-init --db ./lancelot-db`." in result.stderr
    )
    assert f"lancelot-index DOCS {docs}" not in result.stderr  # never: index into the documents
    assert not settings_dir(env).exists()


def test_show_with_nothing_stored_says_so(env):
    result = init(env, "--show")
    assert result.returncode == 0
    assert "Nothing is stored" in result.stdout


def test_show_names_what_the_environment_overrides(env, db):
    init(env, "--db", str(db))
    result = init(env | {"LANCEDB_TABLE": "notes", "LANCEDB_PATH": "  "}, "--show")
    assert "Set in the environment, so used instead of what is stored: LANCEDB_TABLE" in result.stdout


def test_forget_removes_everything_stored(env, db):
    init(env, "--db", str(db), "--api-key-stdin", stdin=KEY)
    result = init(env, "--forget")
    assert result.returncode == 0, result.stderr
    assert not settings_dir(env).exists()
    assert "Nothing is stored" in init(env, "--show").stdout


def test_a_damaged_settings_file_is_reported_and_forget_mends_it(env):
    settings_dir(env).mkdir(parents=True)
    path = settings_dir(env) / "settings.json"
    path.write_text("{broken", encoding="utf-8")
    shown = init(env, "--show")
    assert shown.returncode == 1
    assert str(path) in shown.stderr
    assert "lancelot-init --forget" in shown.stderr
    assert "Traceback" not in shown.stderr
    assert init(env, "--forget").returncode == 0
    assert not path.exists()
