"""What a server keeps of a table on a bucket (moto on 127.0.0.1): the full-text indexes are loaded into Lance's
caches as the table opens and the ranking's short columns are held per version, so a warm search reads only its
hits' texts; a rebuild is seen whole at the next refresh;
the cache stays within LANCELOT_CACHE_MB; a bucket that stops answering mid-query is a tool error."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from tests.server import corpus
from tests.server.storage.test_store_s3 import rebuilt
from tests.support.s3_server import S3Server, read_only_policy, requests

from lancelot_schema.settings import resolve
from lancelot_server.errors import StorageError
from lancelot_server.storage.store import Store
from lancelot_server.tools import Tools

pytestmark = pytest.mark.xdist_group("s3_db")

QUERIES = ("hiss of escaping air", "chain", "patch the tube with glue", "DEC-0054", "opening hours")


def warm_requests(server, db, log, queries, **settings) -> list[tuple[int, list[str]]]:
    """Each of `queries` searched on a server over `db` in the bucket, after a first search: its hits, its requests."""
    uri = server.database(db)
    env = {**server.env(), "LANCEDB_PATH": uri, "LANCELOT_REFRESH_SECONDS": "3600", **settings}
    resolved = resolve(env)
    tools = Tools(Store(resolved.db_path, resolved.storage), resolved)
    try:
        assert tools.search(queries[0], mode="text")["hits"]  # opens the table and loads its indexes and columns
        assert tools.status()["database"]["cache"]["usedBytes"] > 0
        made = []
        for query in queries[1:]:  # words never searched before: their posting lists are in memory already
            seen = len(requests(log))
            made.append((tools.search(query, mode="text")["count"], requests(log)[seen:]))
        return made
    finally:
        tools.close()


def test_a_warm_search_of_a_table_whose_texts_are_held_makes_no_request(lancelot_db, aws_env, tmp_path):
    log = tmp_path / "requests.log"
    with S3Server(log=log) as server:
        aws_env(server.env())
        for count, made in warm_requests(server, lancelot_db, log, ("degreaser", *QUERIES)):
            assert count > 0 and made == []


def test_a_warm_search_reads_no_index_and_no_listing_only_its_hits(aws_env, tmp_path):
    # Long texts (of words every passage holds) and small indexes: at 16 MiB the indexes are loaded ahead and the
    # ranking's columns held, within their 2 MiB, but not its texts (about 4 MB in memory, 1.2 MB in its files).
    vocabulary, filler, rng = words(2_000, 5), words(50, 9), random.Random(13)
    pages = {
        f"page{n:02}.md": f"# Page {n}\n\n" + " ".join(rng.choices(vocabulary, k=100) + rng.choices(filler, k=12_000))
        for n in range(40)
    }
    db = corpus.built(tmp_path / "wordy", pages)
    queries = [pages[f"page{n:02}.md"].split()[3] for n in range(0, 40, 5)]
    log = tmp_path / "requests.log"
    with S3Server(log=log) as server:
        aws_env(server.env())
        for count, made in warm_requests(server, db, log, queries, LANCELOT_CACHE_MB="16"):
            # Each hit's text (Lance reads a long text a row at a time); the ranking's columns are held in memory.
            assert count > 0 and len(made) <= count, made
            assert not [line for line in made if "/_indices/" in line or "/_versions/" in line or "?list" in line]
            assert made and all(line.startswith("GET ") and "/documents.lance/data/" in line for line in made)


def test_a_table_on_a_bucket_answers_as_without_the_cache(s3_db, s3_tools):
    cached, uncached = s3_tools(s3_db), s3_tools(s3_db, LANCELOT_CACHE_MB="0")
    assert cached.status()["database"]["cache"]["boundBytes"] == 256 * 1024 * 1024
    assert uncached.status()["database"]["cache"] == {"boundBytes": 0, "usedBytes": 0}
    for query in QUERIES:
        assert cached.search(query, mode="text") == uncached.search(query, mode="text")


def test_after_a_rebuild_a_search_sees_the_new_rows_and_never_a_mix(s3_server, s3_tools, tmp_path):
    uri, rebuild = rebuilt(s3_server, tmp_path)
    tools = s3_tools(uri, LANCELOT_REFRESH_SECONDS="0.5")
    for query in QUERIES:  # the old version's indexes in memory
        assert tools.search(query, mode="text")["hits"]
    assert tools.search("zeppelin", mode="text")["hits"] == []
    rebuild()
    time.sleep(0.6)  # more than the interval since the last check: the next call must look
    found = tools.search("zeppelin helium", mode="text")["hits"]
    assert found[0]["source"] == "guide/zeppelin.md"
    table = tools.store.opened()["documents"]
    held = table.held(["path"])  # the columns the search held: the new version's, the old one's dropped
    assert held is not None and held.version == table.version
    assert tools.status()["database"]["cache"]["usedBytes"] >= table.held_bytes > 0
    # Every reply is the new version's, exactly as a server that never saw the old one gives it.
    fresh = s3_tools(uri)
    for query in (*QUERIES, "zeppelin helium", "airships"):
        assert tools.search(query, mode="text") == fresh.search(query, mode="text")
    assert tools.status()["table"]["freshness"] == fresh.status()["table"]["freshness"]


def words(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(4)) for _ in range(count)]


@pytest.fixture(scope="module")
def large_db(tmp_path_factory) -> Path:
    """A table whose full-text indexes take more than 1 MiB: 400 pages of words drawn from 30,000."""
    vocabulary, rng = words(30_000, 7), random.Random(11)
    root = tmp_path_factory.mktemp("large")
    pages = {f"page{n:03}.md": f"# Page {n}\n\n" + " ".join(rng.choices(vocabulary, k=600)) for n in range(400)}
    return corpus.built(root, pages)


def test_the_cache_stays_within_its_bound(s3_server, large_db, s3_tools):
    uri = s3_server.database(large_db)
    vocabulary = words(30_000, 7)
    roomy, small = s3_tools(uri), s3_tools(uri, LANCELOT_CACHE_MB="1")
    for query in vocabulary[:40:2]:
        assert roomy.search(query, mode="text") == small.search(query, mode="text")
    roomy_cache, small_cache = roomy.status()["database"]["cache"], small.status()["database"]["cache"]
    assert roomy_cache["usedBytes"] > 1024 * 1024  # what the bound keeps out of the small one
    assert roomy.store.opened()["documents"].held_bytes > 0
    # The ranking's columns, held compactly (about 25 bytes a row here), fit even in the small bound's eighth.
    assert 0 < small.store.opened()["documents"].held_bytes <= 1024 * 1024 // 8
    assert small_cache == {"boundBytes": 1024 * 1024, "usedBytes": small_cache["usedBytes"]}
    assert 0 < small_cache["usedBytes"] <= 1024 * 1024


def test_a_bucket_that_stops_answering_mid_query_is_one_line(s3_server, lancelot_db, s3_tools):
    uri = s3_server.database(lancelot_db)
    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    reader = s3_server.user("lancelot-server", read_only_policy(bucket, prefix))
    tools = s3_tools(uri, reader, LANCELOT_REFRESH_SECONDS="3600")
    assert tools.search("degreaser", mode="text")["hits"]  # open, indexes and texts in memory, the listing kept
    s3_server.deny(reader)
    with pytest.raises(StorageError) as caught:
        tools.read(source="guide/puncture.md")  # its rows are still to be read: refused
    message = str(caught.value)
    assert "\n" not in message and uri in message and "AccessDenied" in message
    assert "LanceError" not in message and "Traceback" not in message


def test_only_the_indexes_that_fit_in_their_share_of_the_bound_are_loaded_and_each_once(large_db):
    import lance

    from lancelot_server.storage import ahead, lance_table

    uri, mib = str(large_db / "documents.lance"), 1024 * 1024
    roomy = lance.dataset(uri, session=lance_table.session(64 * mib))
    loaded: set[str] = set()
    assert sorted(ahead.preload(roomy, 64 * mib, loaded)) == ["heading_idx", "text_idx", "title_idx"]
    held = roomy.session().size_bytes()
    assert held > mib and ahead.preload(roomy, 64 * mib, loaded) == []  # loaded before: nothing read again
    assert roomy.session().size_bytes() == held
    small = lance.dataset(uri, session=lance_table.session(mib))
    assert "text_idx" not in ahead.preload(small, mib, set())  # too large: never read whole
    assert small.session().size_bytes() <= mib // 2


def index_requests(log: Path, since: int) -> list[str]:
    return sorted(line for line in requests(log)[since:] if "/_indices/" in line)


def test_a_first_search_reads_no_index_part_beyond_what_loading_the_indexes_reads(lancelot_db, aws_env, tmp_path):
    # The indexes load in the background while the search scans the held columns; its full-text queries wait for
    # them, so they read no part of an index themselves, and the held columns' ranges are each read once.
    log = tmp_path / "requests.log"
    with S3Server(log=log) as server:
        aws_env(server.env())
        uri = server.database(lancelot_db)
        settings = resolve({**server.env(), "LANCEDB_PATH": uri, "LANCELOT_REFRESH_SECONDS": "3600"})
        loading = Store(settings.db_path, settings.storage)
        seen = len(requests(log))
        assert loading.table("documents").loaded_ahead(30)
        loaded = index_requests(log, seen)
        tools = Tools(Store(settings.db_path, settings.storage), settings)
        try:
            seen = len(requests(log))
            assert tools.search("degreaser", mode="text")["hits"]
            assert loaded and index_requests(log, seen) == loaded
            data = [line for line in requests(log)[seen:] if "/data/" in line]
            assert data and len(set(data)) == len(data)
        finally:
            tools.close()


def test_the_indexes_and_the_columns_loaded_at_once_stay_within_the_bound(s3_server, large_db, s3_tools):
    tools = s3_tools(s3_server.database(large_db), LANCELOT_CACHE_MB="16")
    assert tools.search(words(30_000, 7)[0], mode="text")["hits"]
    table = tools.store.opened()["documents"]
    cache = tools.status()["database"]["cache"]
    # Both loaded by the first search, in their own shares: the indexes (6 MiB) and the ranking's columns (2 MiB).
    assert table.held_bytes > 0 and table.last_seen().session().size_bytes() > 1024 * 1024
    assert cache["boundBytes"] == 16 * 1024 * 1024 and cache["usedBytes"] <= cache["boundBytes"]


def test_a_stopping_server_waits_for_the_indexes_loading(s3_server, s3_db, s3_tools):
    tools = s3_tools(s3_db)
    s3_server.slow_down(100)  # the indexes take a second or more to load: still loading when settle is called
    try:
        with s3_server.hold("/_indices/"):
            table = tools.store.table("documents")  # opened: its indexes loading in the background
            assert not table.loaded_ahead(0)
        tools.store.settle(30)
        assert table.loaded_ahead(0)
    finally:
        s3_server.slow_down(0)


def test_a_bucket_that_fails_while_the_indexes_load_is_one_line(s3_server, lancelot_db, s3_tools):
    uri = s3_server.database(lancelot_db)
    bucket, prefix = uri.removeprefix("s3://").split("/", 1)
    reader = s3_server.user("lancelot-server", read_only_policy(bucket, prefix))
    tools = s3_tools(uri, reader, LANCELOT_REFRESH_SECONDS="3600")
    with s3_server.hold("/_indices/"):  # the refusal comes in the middle of the indexes' loading
        table = tools.store.table("documents")
        assert not table.loaded_ahead(0)
        s3_server.deny(reader)
    with pytest.raises(StorageError) as caught:
        tools.search("degreaser", mode="text")
    message = str(caught.value)
    assert "\n" not in message and uri in message and "AccessDenied" in message
    assert "LanceError" not in message and "Traceback" not in message
