"""The real `lancelot` process over stdio with LANCEDB_PATH=s3://…, against moto's S3 server on 127.0.0.1.

The server's role holds README's read-only policy; every tool and resource runs on every table, and no object
in the bucket changes. A refusal reaches the client as one line, and status still answers.
"""

from __future__ import annotations

import json

import pytest
from tests.architecture.test_read_only import every_tool, ran_everything
from tests.e2e.stdio_server import call, serve, serve_logged
from tests.support.s3_server import Keys, read_only_policy

pytestmark = pytest.mark.waits  # tests/support/ordering.py

SECRET = "wJalrXUtnFEMI-not-a-real-secret"


@pytest.mark.slow
def test_every_tool_and_resource_over_a_bucket_changes_no_object(s3_server, lancelot_db, embedding_server, tmp_path):
    uri = s3_server.database(lancelot_db)
    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    reader = s3_server.user("lancelot-server", read_only_policy(bucket, prefix))
    before = s3_server.objects(bucket)
    assert len(before) > 20

    results = serve(
        uri,
        every_tool,
        **s3_server.env(reader),
        XDG_CONFIG_HOME=str(tmp_path / "no-config"),
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=embedding_server.url,
        EMBEDDING_MODEL="test-8",
        LANCELOT_TABLES="*",
    )
    ran_everything(results)
    status = json.loads(results[0].content[0].text)
    assert status["database"].pop("cache")["usedBytes"] > 0
    assert status["database"] == {
        "path": uri,
        "exists": True,
        "tables": ["documents", "embedded", "embedded_plain", "plain", "workspace"],
    }
    assert s3_server.objects(bucket) == before


def test_refused_credentials_reach_the_client_as_one_line_and_status_still_answers(s3_server, lancelot_db, tmp_path):
    uri = s3_server.database(lancelot_db)

    async def session(client):
        return await call(client, "lancedb_search", {"query": "hiss"}), await call(client, "lancedb_status")

    keys = Keys(s3_server.admin.access_key_id, SECRET)
    search, status = serve(uri, session, **s3_server.env(keys), XDG_CONFIG_HOME=str(tmp_path / "no-config"))
    message = search.content[0].text
    assert search.is_error and message == (
        f"The storage service at {s3_server.endpoint} refused the credentials for {uri} (SignatureDoesNotMatch): "
        "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the role this runs as."
    )
    assert not status.is_error
    assert status.structured_content["database"] == {
        "path": uri,
        "exists": False,
        "tables": [],
        "error": message,
        "cache": {"boundBytes": 256 * 1024 * 1024, "usedBytes": 0},
    }
    assert SECRET not in status.content[0].text


def test_a_bucket_that_refuses_mid_session_is_a_tool_error_and_the_server_goes_on(s3_server, lancelot_db, tmp_path):
    uri = s3_server.database(lancelot_db)
    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    reader = s3_server.user("lancelot-server", read_only_policy(bucket, prefix))

    async def session(client):
        first = await call(client, "lancedb_search", {"query": "degreaser", "mode": "text"})
        s3_server.deny(
            reader
        )  # the table is open, its indexes and texts in memory; a document's rows are still to be read
        refused = await call(client, "lancedb_read", {"source": "guide/puncture.md"})
        return first, refused, await call(client, "lancedb_status")

    environ = {**s3_server.env(reader), "LANCELOT_REFRESH_SECONDS": "3600"}
    (first, refused, status), stderr = serve_logged(uri, session, **environ, XDG_CONFIG_HOME=str(tmp_path / "c"))
    assert not first.is_error and first.structured_content["hits"]
    message = refused.content[0].text
    assert refused.is_error and "\n" not in message and uri in message and "AccessDenied" in message
    assert not status.is_error and "Traceback" not in stderr
