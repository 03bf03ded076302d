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


@pytest.fixture(scope="module")
def many_matches_db(tmp_path_factory):
    """More passages speak of spoke tension than a ranking's pool holds; a few pages say it in their title or
    a heading too."""
    root = tmp_path_factory.mktemp("many")
    docs = {f"ride{n}.md": f"# Ride {n}\n\nSpoke tension checked after ride {n}.\n" for n in range(core.POOL + 30)}
    docs["tension.md"] = "# Spoke tension\n\nThe spoke tension meter reads each spoke.\n"
    docs["truing.md"] = "# Truing\n\n## Spoke tension by ear\n\nPluck a spoke: the tension sings.\n"
    return corpus.built(root, docs)


def test_a_pool_of_text_matches_scores_each_field_as_one_query_summing_them_would(many_matches_db, make_tools):
    from lance.query import BooleanQuery, MatchQuery, Occur

    handle = make_tools(many_matches_db).store.table("documents")
    query = "spoke tension"
    text = handle.search(MatchQuery(query, "text"), query_type="fts").select(["path", "_score"]).limit(core.POOL)
    pool = text.with_row_id().to_arrow()
    assert pool.num_rows == core.POOL  # more rows match than the pool holds: the pool is the text's best
    fields = [MatchQuery(query, column, boost=boost) for column, boost in core.FIELD_BOOSTS.items()]
    summed = core.with_field_scores(handle, pool, fields)
    clauses = [(Occur.SHOULD, clause) for clause in [MatchQuery(query, "text"), *fields]]
    every = handle.search(BooleanQuery(clauses), query_type="fts").select(["_score"]).limit(1000).with_row_id()
    expected = {row["_rowid"]: row["_score"] for row in every.to_arrow().to_pylist()}
    assert summed.column_names == pool.column_names
    for row, alone in zip(summed.to_pylist(), pool.column("_score").to_pylist(), strict=True):
        assert row["_score"] == pytest.approx(expected[row["_rowid"]], rel=1e-5)
        if row["path"] in ("tension.md", "truing.md"):
            assert row["_score"] > alone  # the title or heading added its share


def test_a_title_match_still_ranks_its_page_first_among_many_text_matches(many_matches_db, make_tools):
    hits = make_tools(many_matches_db).search("spoke tension", mode="text", limit=3)["hits"]
    assert {hit["source"] for hit in hits[:2]} == {"tension.md", "truing.md"}
