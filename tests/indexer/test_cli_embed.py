"""`lancelot-index --embed` as a person runs it: the real command, the real openai client, the test endpoint."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import lancedb
import pytest
from tests.support.embedding_server import EmbeddingServer
from tests.support.indexing import run_index
from tests.support.terminal import run_in_terminal

from lancelot_schema import layout

BIN = Path(sys.executable).parent


@pytest.fixture
def docs(small_docs):
    return small_docs


def index(docs, db, env, *options):
    command = [BIN / "lancelot-index", docs, db, "--embed", *options]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def endpoint_env(clean_env, server, key="sk-test", model="test-8"):
    env = clean_env | {"OPENAI_BASE_URL": server.url, "EMBEDDING_MODEL": model}
    return env | {"OPENAI_API_KEY": key} if key else env


def table(db):
    return lancedb.connect(db).open_table(layout.DEFAULT_TABLE)


def test_embed_stores_a_vector_per_chunk_and_says_what_it_cost(docs, tmp_path, clean_env, embedding_server):
    done = index(docs, tmp_path / "db", endpoint_env(clean_env, embedding_server))
    assert done.returncode == 0, done.stderr
    rows = table(tmp_path / "db").to_arrow().to_pylist()
    requests = len(embedding_server.requests)
    assert f"Vectors: {len(rows)} passages embedded with test-8 at 127.0.0.1:{embedding_server.port}" in done.stdout
    assert f"({requests} requests), 0 reused from the current table; width 8." in done.stdout
    # Logs without a terminal (CI) say when embedding ended, and what it took (scripts/bench-embed reads it).
    logged = rf"\[info\s*\] embedded +requests={requests} seconds=[0-9.]+ texts={len(rows)}$"
    assert re.search(logged, done.stderr, re.MULTILINE)
    for row in rows:
        assert row[layout.VECTOR] == pytest.approx(embedding_server.vector(row[layout.TEXT], "test-8"), abs=1e-6)


def test_a_rebuild_embeds_nothing_unchanged_and_only_the_edited_chunks(docs, tmp_path, clean_env, embedding_server):
    env, db = endpoint_env(clean_env, embedding_server), tmp_path / "db"
    run_index(docs, db, "--embed", env=env)  # the table to rebuild, made in this process
    chunks = table(db).count_rows()
    embedding_server.reset()
    second = index(docs, db, env)
    assert second.returncode == 0, second.stderr
    assert embedding_server.requests == []
    assert "Vectors: 0 passages embedded with test-8" in second.stdout
    assert f"(0 requests), {chunks} reused" in second.stdout
    (docs / "guide" / "vacuum.md").write_text(
        "# Vacuum\n\nVacuum FULL rewrites the whole table.\n\n## Autovacuum\n\nIt runs for you.\n", encoding="utf-8"
    )
    third = index(docs, db, env)
    assert third.returncode == 0, third.stderr
    assert "Vectors: 1 passage embedded" in third.stdout and f"{chunks - 1} reused" in third.stdout
    rows = {row[layout.ID]: row for row in table(db).to_arrow().to_pylist()}
    edited = rows["guide/vacuum.md#0"]
    assert "Vacuum FULL" in edited[layout.TEXT]
    assert [text for r in embedding_server.requests for text in r.inputs] == [edited[layout.TEXT]]
    assert edited[layout.VECTOR] == pytest.approx(embedding_server.vector(edited[layout.TEXT], "test-8"), abs=1e-6)


def test_a_local_endpoint_needs_no_key(docs, tmp_path, clean_env):
    with EmbeddingServer(api_key=None) as local:
        done = index(docs, tmp_path / "db", endpoint_env(clean_env, local, key=None))
    assert done.returncode == 0, done.stderr
    assert table(tmp_path / "db").schema.field(layout.VECTOR).type.list_size == 8


def test_no_key_for_openai_fails_before_reading_anything_into_the_table(docs, tmp_path, clean_env):
    done = index(docs, tmp_path / "db", clean_env)
    assert done.returncode == 1
    assert "--embed needs an API key for api.openai.com" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "db" / "documents.lance").exists()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda server, env: env | {"OPENAI_API_KEY": "sk-wrong"}, "401"),
        (lambda server, env: env | {"EMBEDDING_MODEL": "no-such-model"}, "no-such-model"),
        # Retry-After keeps the eight attempts short.
        (lambda server, env: server.fail_next(500, times=100, retry_after=0.01) or env, "500"),
    ],
    ids=["bad key", "unknown model", "server errors"],
)
def test_a_final_failure_leaves_the_table_untouched_and_names_the_cause(
    docs, tmp_path, clean_env, embedding_server, setup, message
):
    env, db = endpoint_env(clean_env, embedding_server), tmp_path / "db"
    run_index(docs, db, "--embed", env=env)  # the table the failing run must leave alone, made in this process
    before = table(db)
    version, rows = before.version, before.to_arrow()
    (docs / "new.md").write_text("# New\n\nA page that needs a vector.\n", encoding="utf-8")
    failing = setup(embedding_server, env)
    done = index(docs, db, failing, "--embed-concurrency", "1")
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr and "sk-wrong" not in done.stderr
    after = table(db)
    assert after.version == version and after.to_arrow().equals(rows)


def test_an_unreachable_endpoint_fails_naming_the_host(docs, tmp_path, clean_env, closed_url):
    env = clean_env | {"OPENAI_BASE_URL": closed_url, "OPENAI_API_KEY": "sk-test", "EMBEDDING_MODEL": "test-8"}
    done = index(docs, tmp_path / "db", env)
    assert done.returncode == 1
    assert closed_url.split("/")[2] in done.stderr and "Traceback" not in done.stderr


def test_a_malformed_endpoint_url_fails_naming_the_setting(docs, tmp_path, clean_env):
    env = clean_env | {"OPENAI_BASE_URL": "http://[::1", "OPENAI_API_KEY": "sk-test"}
    done = index(docs, tmp_path / "db", env)
    assert done.returncode == 1
    assert "OPENAI_BASE_URL 'http://[::1'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "db" / f"{layout.DEFAULT_TABLE}.lance").exists()


def test_embed_concurrency_is_checked(docs, tmp_path):
    done = subprocess.run(
        [BIN / "lancelot-index", docs, tmp_path / "db", "--embed", "--embed-concurrency", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--embed-concurrency" in done.stderr


def test_a_terminal_shows_an_embedding_bar_after_the_reading_bar(docs, tmp_path, clean_env, embedding_server):
    command = [BIN / "lancelot-index", docs, tmp_path / "db", "--embed", "--log-level", "info"]
    status, shown = run_in_terminal(command, endpoint_env(clean_env, embedding_server))
    assert status == 0
    lines = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "\n").splitlines()  # no colours, cursor
    read = max(n for n, line in enumerate(lines) if line.startswith("read") and "100%" in line)
    embed = max(n for n, line in enumerate(lines) if line.startswith("embed") and "100%" in line)
    assert read < embed
    # Each bar ends its line before the next output: the log line that announces embedding starts its own.
    assert any(re.fullmatch(r"\S+Z \[info\s*\] embedding .*", line) for line in lines)
    assert "Vectors: 4 passages embedded" in shown
