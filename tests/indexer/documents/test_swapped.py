"""DOCS and DB given the wrong way round, through the real command: the message names the mix-up and the
command meant, and nothing is written into either folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from lancelot_indexer.cli import main


def files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A folder of documents and a database built from it, as a person's working directory holds them."""
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "setup.md").write_text("# Setup\n\nInstall it.\n", encoding="utf-8")
    built = CliRunner().invoke(main, ["docs", "lancelot-db", "--quiet"])
    assert built.exit_code == 0, built.output
    return tmp_path


def index(*arguments: str):
    return CliRunner().invoke(main, list(arguments))


def test_a_database_as_docs_and_documents_as_db_are_called_swapped_with_the_command_meant(place):
    before = files(place)
    result = index("./lancelot-db", "./docs")
    assert result.exit_code == 1
    assert result.output == (
        "Error: DOCS lancelot-db is a LanceDB database (it holds the table 'documents') and DB docs a folder of "
        "documents: they look swapped. The documents come first: lancelot-index docs lancelot-db\n"
    )
    assert "--allow-empty" not in result.output
    assert files(place) == before  # not even the lock file in the documents folder


def test_one_table_as_docs_is_named_and_its_database_is_the_db_meant(place):
    result = index("lancelot-db/documents.lance", "docs")
    assert result.exit_code == 1
    assert "DOCS lancelot-db/documents.lance is a table of lancelot-db and DB docs a folder of documents" in (
        result.output
    )
    assert result.output.endswith("The documents come first: lancelot-index docs lancelot-db\n")


def test_a_database_as_docs_with_a_new_db_is_refused_without_guessing_the_documents(place):
    result = index("lancelot-db", "other-db")
    assert result.exit_code == 1
    assert result.output == (
        "Error: DOCS lancelot-db is a LanceDB database (it holds the table 'documents'), not a folder of "
        "documents. The documents come first, then the database: lancelot-index DOCS lancelot-db\n"
    )
    assert not (place / "other-db").exists()


def test_a_first_run_swapped_names_the_documents_given_as_db(place):
    result = index("new-db", "docs")
    assert result.exit_code == 1
    assert "The documents folder new-db does not exist, and DB docs holds documents: are the two swapped?" in (
        result.output
    )
    assert result.output.endswith("The documents come first: lancelot-index docs new-db\n")


def test_a_database_kept_inside_its_documents_folder_still_indexes(place):
    # DB inside DOCS is a layout people choose; only the same folder for both is no mix-up to report.
    assert index("docs", "docs/lancelot-db", "--quiet").exit_code == 0
    assert index("docs", "docs", "--quiet").exit_code == 0
    assert index("docs", "docs", "--quiet").exit_code == 0  # now it holds a table and documents
