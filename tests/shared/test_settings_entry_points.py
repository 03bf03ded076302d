"""The entry points read what lancelot-init stored through `settings.load`: real processes, real stores."""

import subprocess
import sys
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
