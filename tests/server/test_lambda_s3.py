"""The Lambda handler over a bucket: the warm container keeps the opened table."""

from datetime import timedelta

import pytest
from tests.server.test_lambda_handler import answer, call, cold_start, event

from lancelot_server import lambda_handler
from lancelot_server.storage import lance_table


@pytest.fixture
def lambda_on_s3(s3_server, lancelot_db, aws_env, monkeypatch, tmp_path):
    """A cold container whose LANCEDB_PATH is the session database copied into a bucket."""
    uri = s3_server.database(lancelot_db)
    aws_env(s3_server.env())
    for name in ("OPENAI_API_KEY", "LANCELOT_ALLOWED_ORIGINS", "LANCELOT_ALLOWED_HOSTS", "LANCELOT_BASE_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANCEDB_PATH", uri)
    monkeypatch.setenv("LANCELOT_ALLOW_UNAUTHENTICATED", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(lambda_handler, "_container", None)
    yield uri
    cold_start()


def test_warm_invocations_reuse_the_opened_table_on_a_bucket(lambda_on_s3, s3_server, monkeypatch):
    opened = []
    real_open = lance_table.LanceTable.open

    def counting_open(uri, options, refresh, *cache):
        opened.append((uri, options, refresh))
        return real_open(uri, options, refresh, *cache)

    monkeypatch.setattr(lance_table.LanceTable, "open", staticmethod(counting_open))
    for query in ("hiss of escaping air", "chain links", "opening hours"):
        reply = answer(lambda_handler.handler(event(call("lancedb_search", {"query": query, "mode": "text"})), None))
        assert reply["result"]["isError"] is False and reply["result"]["structuredContent"]["hits"]
    assert len(opened) == 1
    uri, options, refresh = opened[0]
    assert uri == f"{lambda_on_s3}/documents.lance"
    assert refresh == timedelta(seconds=10)
    assert options == {
        "aws_endpoint": s3_server.endpoint,
        "allow_http": "true",
        "aws_region": "us-east-1",
    }
