"""Text search matches a passage's heading trail and its document's title as well as its text, and a table
indexed before layout 2 (its text alone has a full-text index) answers every search as before."""

from __future__ import annotations

import lance
import lancedb
import pytest
from tests.server import corpus

from lancelot_schema.languages import DEFAULT, FTS_PARAMS
from lancelot_server.search import core

# One worker runs this module when the suite runs on several: the module's databases, made once.
pytestmark = pytest.mark.xdist_group("ranking_dbs")


@pytest.fixture(scope="module")
def sections_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("sections")
    filler = " ".join(f"spoke{n} tension and rim alignment" for n in range(60))
    docs = {
        "wheels.md": f"# Wheel building\n\n## Truing a wheel\n\n{filler}\n\n{filler}\n\n## Lacing\n\nCross three.\n",
        "brakes.md": "# Brake care\n\nPads wear; a wheel rim brake needs clean rims.\n",
    }
    return corpus.built(root, docs, "--chunk-size", "600")


def test_a_query_that_names_only_a_heading_finds_the_passages_under_it(sections_db, make_tools):
    rows = lancedb.connect(str(sections_db)).open_table("documents").to_arrow().to_pylist()
    under = {row["id"] for row in rows if row["heading"] == "Wheel building > Truing a wheel"}
    silent = {row["id"] for row in rows if row["id"] in under and "truing" not in row["text"].lower()}
    assert silent, "the section runs over several passages; the later ones do not repeat its heading"
    hits = make_tools(sections_db).search("truing", mode="text", limit=10, per_document=50)["hits"]
    assert hits[0]["heading"] == "Wheel building > Truing a wheel"
    assert silent <= {hit["id"] for hit in hits} and {hit["id"] for hit in hits} <= under


def test_a_query_that_names_a_title_finds_its_page_first(sections_db, make_tools):
    hits = make_tools(sections_db).search("wheel building", mode="text", limit=3, per_document=1)["hits"]
    assert hits[0]["source"] == "wheels.md"


def test_a_table_with_only_a_text_index_answers_every_search(sections_db, tmp_path, make_tools):
    # As lancelot-index wrote it before layout 2: the same rows, one full-text index, on `text`.
    rows = lancedb.connect(str(sections_db)).open_table("documents").to_arrow()
    old = rows.select(["id", "path", "title", "heading", "text", "text_hash"])
    dataset = lance.write_dataset(old, str(tmp_path / "db" / "documents.lance"))
    dataset.create_scalar_index("text", "INVERTED", name="text_idx", **FTS_PARAMS[DEFAULT])
    tools = make_tools(tmp_path / "db")
    for mode in ("auto", "text", "vector", "hybrid"):
        reply = tools.search("rim alignment", mode=mode)
        assert reply["searchType"] == "text" and reply["textMatch"] == "bm25" and reply["hits"], mode
    assert tools.search("truing", mode="text")["hits"][0]["heading"] == "Wheel building > Truing a wheel"
    assert tools.query("rim", budget=500).startswith("# Search results")


@pytest.fixture(scope="module")
def evidence_db(tmp_path_factory):
    """`seals.md` speaks of gaskets in 30 passages, each long; `notes.md` names a gasket once, in a short one,
    which on its own scores a higher BM25 than any passage of `seals.md`."""
    root = tmp_path_factory.mktemp("evidence")
    filler = " ".join(f"flange{n} bolt torque" for n in range(40))
    seals = "\n\n".join(f"## Joint {n}\n\nThe gasket of joint {n}: {filler}" for n in range(30))
    docs = {"seals.md": f"# Seals\n\n{seals}\n", "notes.md": f"# Notes\n\nA gasket, spare: {filler[:300]}\n"}
    return corpus.built(root, docs, "--chunk-size", "600")


def test_a_document_that_matches_in_many_passages_outranks_one_passage_that_matches_a_little_better(
    evidence_db, make_tools, monkeypatch
):
    tools = make_tools(evidence_db)
    monkeypatch.setattr(core, "DOCUMENT_EVIDENCE", 0.0)
    alone = tools.search("gasket", mode="text", limit=2)["hits"]
    assert [hit["source"] for hit in alone] == ["notes.md", "seals.md"]  # by each passage's own BM25
    monkeypatch.undo()
    hits = tools.search("gasket", mode="text", limit=2)["hits"]
    assert [hit["source"] for hit in hits] == ["seals.md", "notes.md"]
    assert hits[0]["score"] > alone[1]["score"] and hits[1]["score"] == alone[0]["score"]


def test_document_evidence_adds_a_share_of_the_other_passages_of_the_same_document():
    rows = [
        {"path": "a", "_score": 4.0},
        {"path": "b", "_score": 3.0},
        {"path": "a", "_score": 2.0},
        {"path": None, "_score": 1.0},
        {"path": "a", "_score": 1.0},
    ]
    core.with_document_evidence(rows, "_score", 0.5, lambda row: row["path"])
    assert [row["_score"] for row in rows] == [4.0 + 1.5, 3.0, 2.0 + 2.5, 1.0, 1.0 + 3.0]
