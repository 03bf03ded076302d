"""Fixtures for the server's tests: one database built by the real indexer for the whole session, and
Tools over it (`make_tools`, `endpoint_tools` for embeddings from a test endpoint)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.server import corpus
from tests.support.once import built_once

from lancelot_schema.settings import resolve
from lancelot_server.storage.store import Store
from lancelot_server.tools import Tools


@pytest.fixture(scope="session")
def lancelot_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with `documents` (BM25), `plain` (--no-fts), `workspace` (AnythingLLM, vectors of 384)
    and `embedded` (`documents` plus 8-wide vectors: `lancelot-index --embed` with the test endpoint's
    `test-8` model, stamped with it; `embedded_plain` the same with --no-fts). Built once per run."""
    return built_once(tmp_path_factory, "lancelot", _build_lancelot_db) / "db"


def _build_lancelot_db(root: Path) -> None:
    from tests.support.embedding_server import EmbeddingServer

    docs, db = corpus.write_docs(root / "docs"), root / "db"
    corpus.index(docs, db)
    corpus.index(docs, db, "--table", "plain", "--no-fts")
    corpus.anythingllm_table(db)
    with EmbeddingServer() as endpoint:
        env = {"OPENAI_BASE_URL": endpoint.url, "OPENAI_API_KEY": "sk-test", "EMBEDDING_MODEL": "test-8"}
        corpus.index(docs, db, "--table", "embedded", "--embed", env=env)
        corpus.index(docs, db, "--table", "embedded_plain", "--embed", "--no-fts", env=env)


@pytest.fixture
def make_tools():
    """Tools over the database `db` with settings from `environ`; their embedding clients closed afterwards."""
    made: list[Tools] = []

    def make(db, **environ):
        settings = resolve({"LANCEDB_PATH": str(db), **environ})
        made.append(Tools(Store(settings.db_path), settings, protocol_versions=["2025-11-25"]))
        return made[-1]

    yield make
    for tools in made:
        tools.close()


def endpoint_tools(make_tools, db, endpoint, table="embedded", model="test-8", key="sk-test"):
    """Tools whose embeddings come from the test endpoint on 127.0.0.1 (or a URL)."""
    url = endpoint if isinstance(endpoint, str) else endpoint.url
    return make_tools(db, LANCEDB_TABLE=table, OPENAI_API_KEY=key, OPENAI_BASE_URL=url, EMBEDDING_MODEL=model)
