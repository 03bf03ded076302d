"""Fixtures for the server's tests: one database built by the real indexer for the whole session."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.server import corpus


@pytest.fixture(scope="session")
def lancelot_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with `documents` (BM25), `plain` (--no-fts), `workspace` (AnythingLLM, vectors of 384)
    and `embedded` (`documents` plus 8-wide vectors from the test embedding endpoint's `test-8` model)."""
    from tests.support.fake_vectors import hashed_vector

    root = tmp_path_factory.mktemp("lancelot")
    docs, db = corpus.write_docs(root / "docs"), root / "db"
    corpus.index(docs, db)
    corpus.index(docs, db, "--table", "plain", "--no-fts")
    corpus.anythingllm_table(db)
    corpus.add_vectors(db, "documents", "embedded", lambda text: hashed_vector(text, 8), 8)
    return db
