"""lancedb_status's freshness: when and from which folder a table was built, what it holds, and how much of it
the full-text index covers, on tables built by the real indexer."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

import lance
import pyarrow as pa
from tests.server import corpus

from lancelot_schema import layout

DOCS = {
    "guide/install.md": "# Install\n\nRun the installer and follow the prompts.\n",
    "guide/usage.md": "# Usage\n\n" + "\n\n".join(f"Paragraph {n} about running queries." * 30 for n in range(12)),
    "notes.txt": "Plain notes about backups.\n",
}


def index_relative(root, *options):
    """`lancelot-index docs db` run in `root`: both paths given relative, as a person at a terminal would."""
    done = subprocess.run(
        [str(corpus.BIN / "lancelot-index"), "docs", "db", "--quiet", *options],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_status_says_when_and_from_which_folder_a_table_was_built_and_what_it_holds(tmp_path, make_tools):
    corpus.write_docs(tmp_path / "docs", DOCS)
    before = datetime.now(UTC).replace(microsecond=0)
    index_relative(tmp_path)
    table = make_tools(tmp_path / "db").status()["table"]
    fresh = table["freshness"]
    assert fresh["source"] == str(tmp_path / "docs")  # made absolute: the indexer ran in tmp_path
    assert before <= datetime.fromisoformat(fresh["builtAt"]) <= datetime.now(UTC)
    assert fresh["documents"] == 3
    assert fresh["passages"] == table["rows"] > 3  # usage.md is long enough for several passages
    assert fresh["fullText"] == {"indexedRows": table["rows"], "unindexedRows": 0}
    assert fresh["version"] == lance.dataset(str(tmp_path / "db" / "documents.lance")).version


def test_freshness_follows_a_rebuild_and_counts_rows_the_index_does_not_cover(tmp_path, make_tools):
    corpus.write_docs(tmp_path / "docs", DOCS)
    index_relative(tmp_path)
    tools = make_tools(tmp_path / "db")
    first = tools.status()["table"]["freshness"]
    (tmp_path / "docs" / "guide" / "install.md").unlink()
    corpus.write_docs(tmp_path / "docs", {"faq.md": "# FAQ\n\nAnswers.\n", "more.md": "# More\n\nText.\n"})
    index_relative(tmp_path)
    second = tools.status()["table"]["freshness"]
    assert second["documents"] == 4 and second["version"] > first["version"]
    assert second["fullText"] == {"indexedRows": second["passages"], "unindexedRows": 0}

    # Rows appended without updating the index (another tool's writer, or a run stopped before its index
    # commit) are searched by a scan until the next rebuild: the status counts them.
    dataset = lance.dataset(str(tmp_path / "db" / "documents.lance"))
    extra = dataset.to_table(filter="path = 'faq.md'").replace_schema_metadata(dataset.schema.metadata)
    extra = extra.set_column(0, layout.ID, pa.array([f"extra#{n}" for n in range(extra.num_rows)]))
    lance.write_dataset(extra, dataset.uri, mode="append")
    third = tools.status()["table"]["freshness"]
    assert third["passages"] == second["passages"] + extra.num_rows
    assert third["fullText"] == {"indexedRows": second["passages"], "unindexedRows": extra.num_rows}


def test_freshness_of_a_table_without_index_or_stamp(lancelot_db, make_tools):
    plain = make_tools(lancelot_db, LANCEDB_TABLE="plain").status()["table"]["freshness"]
    assert plain["fullText"] is None and plain["documents"] == len(corpus.DOCS)
    # AnythingLLM's table: no stamp, no passage numbers.
    workspace = make_tools(lancelot_db, LANCEDB_TABLE="workspace").status()["table"]
    assert workspace["freshness"] == {
        "builtAt": None,
        "source": None,
        "version": lance.dataset(str(lancelot_db / "workspace.lance")).version,
        "documents": None,
        "passages": workspace["rows"],
        "fullText": None,
    }
