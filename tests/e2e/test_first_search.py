"""The real `lancelot` over stdio opens its table in the background as it starts; a first search sent right
after the handshake, while that work is still going on (each request to this bucket takes 0.2 s), is answered
exactly as a later one, and the bucket is listed once: the search waited for the background work."""

from __future__ import annotations

import pytest
from tests.e2e.stdio_server import call, serve
from tests.support.s3_server import S3Server, requests

pytestmark = pytest.mark.waits  # tests/support/ordering.py


@pytest.mark.slow
def test_the_first_search_waits_for_the_opening_table_and_is_answered(lancelot_db, tmp_path):
    log = tmp_path / "requests.log"
    with S3Server(log=log) as slow:
        uri = slow.database(lancelot_db)
        slow.slow_down(200)  # after the upload, which is a request per file
        bucket, prefix = uri.removeprefix("s3://").split("/", 1)
        uploaded = len(requests(log))

        async def session(client):
            listed = await client.list_tools()
            first = await call(client, "lancedb_search", {"query": "hiss of escaping air", "mode": "text"})
            again = await call(client, "lancedb_search", {"query": "hiss of escaping air", "mode": "text"})
            return listed, first, again

        listed, first, again = serve(uri, session, **slow.env(), XDG_CONFIG_HOME=str(tmp_path / "no-config"))
    assert "lancedb_search" in [tool.name for tool in listed.tools]
    assert not first.is_error and first.structured_content["hits"]
    assert first.structured_content["hits"][0]["source"] == "guide/puncture.md"
    assert first.structured_content == again.structured_content
    made = requests(log)[uploaded:]
    listings = [line for line in made if line.startswith(f"GET /{bucket}?") and "delimiter=%2F" in line]
    assert len(listings) == 1, made
    assert any(f"/{prefix}/documents.lance/_versions/" in line for line in made)
