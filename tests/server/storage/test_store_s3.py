"""The server over object storage: the session database copied into a bucket of a real S3-compatible server
(moto on 127.0.0.1, checking signatures and IAM policies) answers every tool as the folder does; each
way of failing to reach it is one line naming the URI; a rebuild is seen after LANCELOT_REFRESH_SECONDS."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.server import corpus
from tests.server.conftest import endpoint_tools
from tests.support.s3_server import Keys, read_only_policy

from lancelot_server.errors import DatabaseNotFound, LancelotError, StorageError
from lancelot_server.tools import Tools

# One worker runs this module when the suite runs on several: the module's bucket, made once.
pytestmark = pytest.mark.xdist_group("s3_db")

SECRET = "wJalrXUtnFEMI-not-a-real-secret"
# The status's cache where no table could be opened: the default bound, nothing in it.
NOTHING_KEPT = {"boundBytes": 256 * 1024 * 1024, "usedBytes": 0}


def without_cache(status: dict[str, Any]) -> dict[str, Any]:
    """The status less the cache's use, which grows with what searches read."""
    return {**status, "database": {**status["database"], "cache": None}}


def without_path(status: dict[str, Any]) -> dict[str, Any]:
    """The status less what differs between a bucket and its folder: the path, and the cache's use (the bucket's
    full-text indexes are loaded into it as the table opens)."""
    return {**status, "database": {**status["database"], "path": None, "cache": None}}


def test_every_tool_answers_over_a_bucket_exactly_as_over_the_folder(s3_db, lancelot_db, s3_tools, make_tools):
    remote, local = s3_tools(s3_db, LANCELOT_TABLES="*"), make_tools(lancelot_db, LANCELOT_TABLES="*")
    status = remote.status()
    assert status["database"]["path"] == s3_db and status["database"]["exists"] is True
    assert status["database"]["tables"] == ["documents", "embedded", "embedded_plain", "plain", "workspace"]
    assert without_path(status) == without_path(local.status())
    for table in ("documents", "plain", "workspace", ["documents", "workspace"]):
        for query in ("hiss of escaping air", "DEC-0054", "chain"):
            asked = {"query": query, "mode": "text", "table": table}
            assert remote.search(**asked) == local.search(**asked)
            assert remote.query(**asked, path="guide/") == local.query(**asked, path="guide/")
    for arguments in ({"id": "guide/puncture.md#1"}, {"source": "guide/chain.md"}, {"source": "localfiles/chain.md"}):
        table = "workspace" if "localfiles" in str(arguments) else "documents"
        assert remote.read(**arguments, table=table).text == local.read(**arguments, table=table).text
    assert remote.version() == local.version()


def test_vector_and_hybrid_search_run_over_a_bucket(s3_db, lancelot_db, s3_tools, make_tools, embedding_server):
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": embedding_server.url, "EMBEDDING_MODEL": "test-8"}
    remote = s3_tools(s3_db, LANCEDB_TABLE="embedded", **environ)
    local = endpoint_tools(make_tools, lancelot_db, embedding_server)
    for mode in ("vector", "hybrid", "auto"):
        reply = remote.search("patch the tube with glue", mode=mode)
        assert reply["searchType"] == ("hybrid" if mode == "auto" else mode) and reply["hits"]
        assert reply == local.search("patch the tube with glue", mode=mode)


def test_the_read_only_policy_of_readme_is_all_the_server_needs(s3_server, s3_db, s3_tools):
    bucket, prefix = s3_db.removeprefix("s3://").split("/", 1)
    reader = s3_server.user("lancelot-server", read_only_policy(bucket, prefix))
    tools = s3_tools(s3_db, reader)
    assert tools.status()["table"]["searchTypes"] == ["text"]
    assert tools.search("hiss", mode="text")["hits"][0]["source"] == "guide/puncture.md"
    assert tools.read(source="guide/chain.md").reply["passages"]


def failing(tools: Tools, error: type[LancelotError] = StorageError) -> tuple[str, dict[str, Any]]:
    """The search refusal and the status of tools over a place they cannot read."""
    with pytest.raises(error) as caught:
        tools.search("hiss", mode="text")
    return str(caught.value), tools.status()


def check_one_line(message: str, status: dict[str, Any], uri: str) -> None:
    assert "\n" not in message and uri in message and SECRET not in message
    assert "LanceError" not in message and "Traceback" not in message and "<Error>" not in message
    assert status["database"] == {"path": uri, "exists": False, "tables": [], "error": message, "cache": NOTHING_KEPT}
    assert status["table"]["exists"] is False


def test_a_mistyped_bucket_is_one_line_and_status_still_answers(s3_server, s3_tools):
    uri = "s3://lancelot-no-such-bucket/teams/docs"
    message, status = failing(s3_tools(uri))
    assert message == (
        f"The bucket lancelot-no-such-bucket of {uri} does not exist at {s3_server.endpoint}: check the bucket name."
    )
    check_one_line(message, status, uri)


@pytest.mark.parametrize(
    ("keys", "code"),
    [(Keys("AKIAUNKNOWNKEY000000", SECRET), "InvalidAccessKeyId"), (None, "SignatureDoesNotMatch")],
)
def test_wrong_credentials_are_one_line_that_never_shows_the_secret(s3_server, s3_tools, keys, code):
    # Each case reads a bucket of its own: Lance keeps a store (and its credentials) per bucket and options.
    uri = f"s3://{s3_server.bucket()}/teams/docs"
    keys = keys or Keys(s3_server.admin.access_key_id, SECRET)
    message, status = failing(s3_tools(uri, keys))
    assert message == (
        f"The storage service at {s3_server.endpoint} refused the credentials for {uri} ({code}): check "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the role this runs as."
    )
    check_one_line(message, status, uri)


def test_missing_credentials_are_one_line(s3_server, s3_tools, aws_env):
    uri = f"s3://{s3_server.bucket()}/teams/docs"
    tools = s3_tools(uri)
    aws_env({"AWS_ENDPOINT_URL": s3_server.endpoint, "AWS_REGION": "us-east-1"})  # no key anywhere in the chain
    message, status = failing(tools)
    assert message.startswith(f"No credentials were found for {uri}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
    check_one_line(message, status, uri)


def test_a_policy_for_another_prefix_is_access_denied(s3_server, s3_db, s3_tools):
    bucket, _ = s3_db.removeprefix("s3://").split("/", 1)
    elsewhere = s3_server.user("elsewhere", read_only_policy(bucket, "another/prefix"))
    tools = s3_tools(s3_db, elsewhere)
    with pytest.raises(LancelotError) as caught:
        tools.search("hiss", mode="text")
    assert str(caught.value) == (
        f"Access to {s3_db} was denied (AccessDenied): the credentials in use may not read it; give them the "
        "policy in docs/object-storage.md."
    )
    assert tools.status()["table"]["error"] == str(caught.value)


def test_an_endpoint_that_does_not_answer_is_one_line(s3_server, s3_tools, closed_url):
    endpoint = closed_url.removesuffix("/v1")
    uri = f"s3://{s3_server.bucket()}/teams/docs"
    message, status = failing(s3_tools(uri, endpoint=endpoint))
    assert message == f"Cannot reach the storage service for {uri} at {endpoint} (cannot connect)."
    check_one_line(message, status, uri)


def test_an_empty_prefix_says_nothing_is_stored_there(s3_server, s3_db, s3_tools):
    uri = s3_db.replace("teams/docs", "teams/dcos")
    message, status = failing(s3_tools(uri), DatabaseNotFound)
    assert message == (
        f"Nothing is stored under {uri}: no table. Check LANCEDB_PATH, or build it with `lancelot-index DOCS {uri}`."
    )
    check_one_line(message, status, uri)


def test_a_malformed_uri_is_refused_by_status_and_every_tool(s3_tools):
    tools = s3_tools("s3:/bucket/db")
    with pytest.raises(LancelotError, match=r"^LANCEDB_PATH: s3:/bucket/db is not a valid URI: write s3://BUCKET"):
        tools.search("hiss")
    assert tools.status()["database"]["exists"] is False


# Rebuilds: the indexer commits a new version; a reader on a bucket sees it at its next check.


def rebuilt(s3_server, root: Path) -> tuple[str, Callable[[], None]]:
    """A database built locally and copied into a bucket; then a rebuild that adds a document, copied too."""
    docs, db = corpus.write_docs(root / "docs"), root / "db"
    corpus.index(docs, db)
    uri = s3_server.database(db)
    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    before = {path for path in db.rglob("*") if path.is_file()}
    corpus.write_docs(docs, {"guide/zeppelin.md": "# Airships\n\nA zeppelin floats on hydrogen or helium.\n"})

    def rebuild() -> None:
        corpus.index(docs, db)
        s3_server.upload(db, bucket, prefix, only=[p for p in db.rglob("*") if p.is_file() and p not in before])

    return uri, rebuild


def test_a_rebuild_is_not_seen_before_the_refresh_interval(s3_server, s3_tools, tmp_path):
    uri, rebuild = rebuilt(s3_server, tmp_path)
    tools = s3_tools(uri, LANCELOT_REFRESH_SECONDS="3600")
    assert tools.search("zeppelin", mode="text")["hits"] == []
    rebuild()
    assert tools.search("zeppelin", mode="text")["hits"] == []
    assert s3_tools(uri).search("zeppelin", mode="text")["hits"][0]["source"] == "guide/zeppelin.md"


def test_a_rebuild_is_seen_once_the_refresh_interval_has_passed(s3_server, s3_tools, tmp_path):
    uri, rebuild = rebuilt(s3_server, tmp_path)
    tools = s3_tools(uri, LANCELOT_REFRESH_SECONDS="0.5")
    rows = tools.status()["table"]["rows"]
    assert tools.search("zeppelin", mode="text")["hits"] == []
    rebuild()
    time.sleep(0.6)  # more than the interval since the last check: the next call must look
    assert tools.search("zeppelin", mode="text")["hits"][0]["source"] == "guide/zeppelin.md"
    assert tools.status()["table"]["rows"] > rows


# What a bucket costs: a listing is a round trip, so status and searches list it at most once per interval.


@pytest.fixture
def counted(monkeypatch):
    """Every listing of the database's tables and every table opened from now on."""
    from lancelot_server.storage import lance_table

    calls: dict[str, int] = {"open": 0, "list_tables": 0}
    real_names, real_open = lance_table.table_names, lance_table.LanceTable.open

    def table_names(*args, **kwargs):
        calls["list_tables"] += 1
        return real_names(*args, **kwargs)

    def open_table(*args, **kwargs):
        calls["open"] += 1
        return real_open(*args, **kwargs)

    monkeypatch.setattr(lance_table, "table_names", table_names)
    monkeypatch.setattr(lance_table.LanceTable, "open", staticmethod(open_table))
    return calls


def test_status_and_searches_list_the_bucket_once_per_refresh_interval(s3_db, s3_tools, counted):
    tools = s3_tools(s3_db, LANCELOT_REFRESH_SECONDS="3600")
    first = without_cache(tools.status())
    for _ in range(3):
        assert without_cache(tools.status()) == first
        assert tools.search("hiss", mode="text")["hits"]
    assert counted == {"open": 1, "list_tables": 1}


def test_an_unreachable_endpoint_is_waited_for_once_per_refresh_interval(s3_server, s3_tools, closed_url, counted):
    uri = f"s3://{s3_server.bucket()}/teams/docs"
    tools = s3_tools(uri, endpoint=closed_url.removesuffix("/v1"), LANCELOT_REFRESH_SECONDS="3600")
    messages = {failing(tools)[0] for _ in range(3)}
    # The opening begun beside the first listing is the only one: the calls that meet the kept failure start none.
    assert len(messages) == 1 and counted == {"open": 1, "list_tables": 1}


def test_a_refused_listing_is_said_without_waiting_for_the_opening_begun_beside_it(s3_server, s3_tools, monkeypatch):
    from lancelot_server.storage import lance_table

    real_open, said, resumed, waited = lance_table.LanceTable.open, threading.Event(), threading.Event(), []

    def opening_held_until_said(*args, **kwargs):
        waited.append(said.wait(60))  # never set if the refusal waited for this opening
        resumed.set()
        return real_open(*args, **kwargs)

    monkeypatch.setattr(lance_table.LanceTable, "open", staticmethod(opening_held_until_said))
    tools = s3_tools("s3://lancelot-no-such-bucket/teams/docs")
    with pytest.raises(StorageError, match="does not exist"):
        tools.search("hiss", mode="text")
    said.set()
    assert resumed.wait(60) and waited == [True]
    assert tools.status()["database"]["error"].startswith("The bucket lancelot-no-such-bucket")
