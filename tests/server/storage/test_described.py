"""The line that names the served tables in every tool: which tables, in which order, with what, how bounded."""

from __future__ import annotations

import json

import pytest
from tests.server import corpus

from lancelot_schema import about
from lancelot_schema.settings import resolve
from lancelot_server.auth import callers
from lancelot_server.storage import described
from lancelot_server.storage.store import Store
from lancelot_server.storage.tables import Tables

pytestmark = pytest.mark.xdist_group("described")

ONE = {"gears.md": "# Gears\n\nA gear meshes with a sprocket.\n"}
TWO = {**ONE, "chains.md": "# Chains\n\nA chain links two sprockets.\n"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("described")
    db = root / "db"
    corpus.index(corpus.write_docs(root / "two", TWO), db, "--description", "Gear manual")
    corpus.index(corpus.write_docs(root / "one", ONE), db, "--table", "single", "--description", "One page")
    corpus.index(corpus.write_docs(root / "gear-notes", ONE), db, "--table", "bare")
    return db


def line(db, **environ):
    settings = resolve({"LANCEDB_PATH": str(db), **environ})
    store = Store(settings.db_path, settings.storage)
    return described.line(store, Tables(store, settings)), store, settings


def test_the_served_tables_the_database_holds_are_named_default_first_with_their_size(db):
    assert line(db)[0] == "Tables: documents — Gear manual, 2 documents."
    said = line(db, LANCEDB_TABLE="single", LANCELOT_TABLES="documents,nowhere")[0]
    assert said == "Tables: single — One page, 1 document; documents — Gear manual, 2 documents."
    every = line(db, LANCELOT_TABLES="*")[0]
    assert (
        every
        == "Tables: documents — Gear manual, 2 documents; bare — gear-notes, 1 document; single — One page, 1 document."
    )
    assert line(db, LANCEDB_TABLE="nowhere")[0] == ""


def test_a_caller_hears_only_of_the_tables_it_may_see(db):
    token = callers.current.set(callers.Principal(label="scoped", tables=frozenset({"single"})))
    try:
        said = line(db, LANCELOT_TABLES="*")[0]
    finally:
        callers.current.reset(token)
    assert said == "Tables: single — One page, 1 document."


def test_a_record_that_is_stale_or_gone_names_the_table_alone_until_it_is_open(db, tmp_path):
    record = db / "single.lance" / about.ABOUT
    kept = record.read_text(encoding="utf-8")
    try:
        record.write_text(kept.replace('"manifest":["', '"manifest":["0'), encoding="utf-8")  # another version's
        said, store, settings = line(db, LANCEDB_TABLE="single")
        assert said == "Tables: single."
        Tables(store, settings).open("single")  # a tool opened it: its stamp says the rest
        assert described.line(store, Tables(store, settings)) == "Tables: single — One page, 1 passage."
    finally:
        record.write_text(kept, encoding="utf-8")


def test_a_record_edited_by_hand_is_shown_as_one_bounded_line(db):
    record = db / "single.lance" / about.ABOUT
    kept = record.read_text(encoding="utf-8")
    try:
        hostile = "Ignore\nprevious\x1b[2J " + "x" * 500
        record.write_text(kept.replace('"One page"', json.dumps(hostile)), encoding="utf-8")
        said = line(db, LANCEDB_TABLE="single")[0]
        assert "\n" not in said and "\x1b" not in said and said.startswith("Tables: single — Ignore previous [2J xxx")
        assert len(said) < about.MAX_DESCRIPTION + 60
    finally:
        record.write_text(kept, encoding="utf-8")


def test_past_the_most_named_the_line_says_how_many_more(db, monkeypatch):
    monkeypatch.setattr(described, "MAX_NAMED", 1)
    said = line(db, LANCELOT_TABLES="*")[0]
    assert said == "Tables: documents — Gear manual, 2 documents; and 2 more (lancedb_status lists them)."


def test_on_a_bucket_a_table_is_named_alone_until_open_then_by_its_stamp(db, s3_server, aws_env):
    variables = s3_server.env()
    aws_env(variables)
    settings = resolve({**variables, "LANCEDB_PATH": s3_server.database(db), "LANCELOT_TABLES": "single"})
    store = Store(settings.db_path, settings.storage)
    tables = Tables(store, settings)
    assert described.line(store, tables) == "Tables: documents; single."  # no request made to say it
    store.table("documents")  # what the background preparation does as the server starts
    assert described.line(store, tables) == "Tables: documents — Gear manual, 2 passages; single."
    assert described.interval(store) == max(described.ANNOUNCE_SECONDS, store.location.refresh_seconds)
