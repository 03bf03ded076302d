"""`run_index`: the real indexer in the test process, leaving the process as it found it."""

import os
import signal

import lancedb
import pytest
from tests.server import corpus
from tests.support.indexing import run_index

from lancelot_indexer import log


def test_builds_the_table_and_leaves_the_process_as_it_was(tmp_path):
    handler = signal.getsignal(signal.SIGTERM)
    level = log._threshold
    run_index(corpus.write_docs(tmp_path / "docs"), tmp_path / "db", "--quiet", env={"LANCEDB_TABLE": "manual"})
    assert lancedb.connect(str(tmp_path / "db")).open_table("manual").count_rows() > 0
    assert signal.getsignal(signal.SIGTERM) is handler
    assert "LANCEDB_TABLE" not in os.environ
    assert log._threshold == level


def test_a_refusal_fails_the_test_with_the_commands_message(tmp_path):
    (tmp_path / "db").write_text("not a folder")
    with pytest.raises(pytest.fail.Exception, match=r"--quiet: Error: .*db is a file, not a database folder\."):
        run_index(corpus.write_docs(tmp_path / "docs"), tmp_path / "db", "--quiet")
