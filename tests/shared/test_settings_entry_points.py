"""The entry points read what lancelot-init stored through `settings.load`: real processes, real stores."""

import subprocess
import sys
import tempfile
from pathlib import Path

import lancedb
import pytest

BIN = Path(sys.executable).parent


@pytest.fixture
def environ(clean_env):
    return clean_env


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nHow to set things up.\n", encoding="utf-8")
    return folder


def run(environ, *command, stdin=""):
    return subprocess.run(command, input=stdin, env=environ, capture_output=True, text=True, timeout=120)


def index(environ, docs, db, *args):
    result = run(environ, BIN / "lancelot-index", docs, db, "--quiet", *args)
    assert result.returncode == 0, result.stderr
    return result


def tables(db):
    return sorted(lancedb.connect(db).list_tables().tables)


@pytest.mark.slow
def test_the_indexer_takes_its_table_from_flag_then_environment_then_stored_then_default(environ, docs, tmp_path):
    db = tmp_path / "db"
    index(environ, docs, db)
    assert tables(db) == ["documents"]

    init = run(environ, BIN / "lancelot-init", "--db", db, "--table", "documents")
    assert init.returncode == 0, init.stderr
    config = tmp_path / "config" / "lancelot" / "settings.json"
    config.write_text(config.read_text(encoding="utf-8").replace('"documents"', '"stored"'), encoding="utf-8")
    index(environ, docs, db)
    assert tables(db) == ["documents", "stored"]

    index(environ | {"LANCEDB_TABLE": "from_env"}, docs, db)
    index(environ | {"LANCEDB_TABLE": "   "}, docs, db)  # blank: the stored value applies
    index(environ | {"LANCEDB_TABLE": "from_env"}, docs, db, "--table", "from_flag")
    assert tables(db) == ["documents", "from_env", "from_flag", "stored"]


def test_the_indexer_warns_about_damaged_settings_and_still_runs(environ, docs, tmp_path):
    config = tmp_path / "config" / "lancelot"
    config.mkdir(parents=True)
    (config / "settings.json").write_text("{damaged", encoding="utf-8")
    result = index(environ | {"LANCEDB_TABLE": "t"}, docs, tmp_path / "db")
    assert str(config / "settings.json") in result.stderr
    assert "lancelot-init --forget" in result.stderr
    assert "Traceback" not in result.stderr
    assert tables(tmp_path / "db") == ["t"]


def server_status(environ):
    """`lancedb_status` from a real `lancelot` process over stdio, and what the server wrote to stderr."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def ask(errors):
        params = StdioServerParameters(command=str(BIN / "lancelot"), args=[], env=environ)
        async with stdio_client(params, errlog=errors) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return (await session.call_tool("lancedb_status", {})).structured_content

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
        status = anyio.run(ask, errors)
        errors.seek(0)
        return status, errors.read()


def two_table_db(path):
    connection = lancedb.connect(path)
    for name in ("documents", "notes"):
        connection.create_table(name, data=[{"id": "a#0", "text": "hello"}])
    return path


@pytest.mark.slow
def test_the_server_takes_stored_settings_where_the_environment_is_silent(environ, tmp_path):
    stored_db, env_db = two_table_db(tmp_path / "stored"), two_table_db(tmp_path / "env")
    key = "sk-proj-stored0123456789abcdef"
    init = run(environ, BIN / "lancelot-init", "--db", stored_db, "--table", "notes", "--api-key-stdin", stdin=key)
    assert init.returncode == 0, init.stderr

    status, _ = server_status(environ | {"OPENAI_API_KEY": " "})
    assert (status["database"]["path"], status["table"]["name"]) == (str(stored_db), "notes")
    assert status["embedding"]["apiKey"] is True

    status, _ = server_status(environ | {"LANCEDB_PATH": str(env_db), "LANCEDB_TABLE": "documents"})
    assert (status["database"]["path"], status["table"]["name"]) == (str(env_db), "documents")

    run(environ, BIN / "lancelot-init", "--forget")
    status, _ = server_status(environ)
    assert (status["database"]["path"], status["table"]["name"]) == (None, "documents")
    assert status["embedding"]["apiKey"] is False


def test_the_server_starts_with_damaged_settings_and_says_which_file(environ, tmp_path):
    config = tmp_path / "config" / "lancelot"
    config.mkdir(parents=True)
    (config / "settings.json").write_text("{damaged", encoding="utf-8")
    db = two_table_db(tmp_path / "db")
    status, errors = server_status(environ | {"LANCEDB_PATH": str(db)})
    assert status["database"]["path"] == str(db)
    assert str(config / "settings.json") in errors
    assert "lancelot-init --forget" in errors
