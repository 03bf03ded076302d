"""Queries of a table indexed with `lancelot-index --embed local`: embedded by the same model run here, found by
meaning; a missing model, a different one or a missing extra sends the search to text with a note saying what to do.

The table is built once by the real indexer with a real all-MiniLM-L6-v2 (int8 ONNX) on CPU."""

from __future__ import annotations

import json
import shutil

import pytest
from tests.server import corpus
from tests.server.local_corpus import DOCS, QUERIES

from lancelot_schema.local_models import KNOWN

pytestmark = pytest.mark.xdist_group("local_db")


@pytest.fixture(scope="module")
def local_db(tmp_path_factory, local_model):
    root = tmp_path_factory.mktemp("local")
    docs, db = corpus.write_docs(root / "docs", DOCS), root / "db"
    corpus.index(docs, db, "--embed", f"local:{local_model}")
    return db


def local_tools(make_tools, db, tmp_path, **environ):
    return make_tools(db, XDG_CACHE_HOME=str(tmp_path / "cache"), **environ)


def sources(reply):
    return [hit["source"] for hit in reply["hits"]]


def test_vector_and_hybrid_find_the_answer_that_shares_no_word_with_the_question(
    local_db, local_model, make_tools, tmp_path
):
    tools = local_tools(make_tools, local_db, tmp_path, LANCELOT_EMBED_MODEL_PATH=str(local_model))
    assert tools.search("irrigating vegetables", mode="text")["hits"] == []  # no word in common
    for query, answer in QUERIES:
        for mode in ("vector", "hybrid"):
            reply = tools.search(query, mode=mode)
            assert (reply["searchType"], "note" in reply) == (mode, False), reply
            assert sources(reply)[0] == answer, (query, mode)
    assert tools.search(QUERIES[0][0])["searchType"] == "hybrid"  # auto: hybrid on such a table, with no key


def test_the_model_in_the_cache_serves_too_and_nothing_is_downloaded_unasked(
    local_db, local_model, make_tools, tmp_path
):
    missing = local_tools(make_tools, local_db, tmp_path).search(QUERIES[0][0], mode="vector")
    cache = tmp_path / "cache" / "lancelot" / "models" / "all-MiniLM-L6-v2"
    assert missing["searchType"] == "text"
    assert missing["note"] == (
        "the local model all-MiniLM-L6-v2 is not on this machine: give its folder (LANCELOT_EMBED_MODEL_PATH), "
        f"put it in {cache}, or set LANCELOT_EMBED_DOWNLOAD=1 to download it from "
        f"{KNOWN['all-MiniLM-L6-v2'].home}; used text search instead."
    )
    assert not cache.exists()
    cache.parent.mkdir(parents=True)
    cache.symlink_to(local_model)
    found = local_tools(make_tools, local_db, tmp_path).search(QUERIES[0][0], mode="vector")
    assert (found["searchType"], sources(found)[0]) == ("vector", "car.md")


def test_a_folder_of_another_model_is_refused_by_name(local_db, local_model, make_tools, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (other / name).symlink_to(local_model / name)
    (other / "lancelot-model.json").write_text(json.dumps({"name": "bge-small-en-v1.5"}), encoding="utf-8")
    reply = local_tools(make_tools, local_db, tmp_path, LANCELOT_EMBED_MODEL_PATH=str(other)).search("x", mode="hybrid")
    assert reply["searchType"] == "text"
    assert reply["note"].startswith(
        "LANCELOT_EMBED_MODEL_PATH holds the model bge-small-en-v1.5, not all-MiniLM-L6-v2: point it at a folder of "
        "all-MiniLM-L6-v2"
    )


def test_status_names_the_local_model_without_loading_it(local_db, local_model, make_tools, tmp_path):
    tools = local_tools(make_tools, local_db, tmp_path, LANCELOT_EMBED_MODEL_PATH=str(local_model))
    table = tools.status()["table"]
    assert table["metadata"]["embedding_model"] == "local:all-MiniLM-L6-v2"
    assert table["metadata"]["vector_width"] == "384"
    assert tools.modes.local.get("all-MiniLM-L6-v2")._loaded is None


def test_a_search_of_several_tables_answers_from_each_when_the_local_model_is_missing(local_db, make_tools, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(local_db, db)
    corpus.index(corpus.write_docs(tmp_path / "plain", DOCS), db, "--table", "plain")  # text only
    tools = local_tools(make_tools, db, tmp_path, LANCELOT_TABLES="documents,plain")
    reply = tools.search("tyre pressure", mode="vector", table=["documents", "plain"])
    assert [(entry["table"], entry["searchType"]) for entry in reply["tables"]] == [
        ("documents", "text"),
        ("plain", "text"),
    ]
    assert {(hit["table"], hit["source"]) for hit in reply["hits"]} == {("documents", "car.md"), ("plain", "car.md")}
    # What to do is said for the table that needs the model: its name, the folder setting, the cache, the download.
    cache = tmp_path / "cache" / "lancelot" / "models" / "all-MiniLM-L6-v2"
    assert reply["note"].startswith(
        "Table 'documents': the local model all-MiniLM-L6-v2 is not on this machine: give its folder "
        f"(LANCELOT_EMBED_MODEL_PATH), put it in {cache}, or set LANCELOT_EMBED_DOWNLOAD=1 to download it from "
    )
    assert "Table 'plain': the table has no vector column" in reply["note"]
