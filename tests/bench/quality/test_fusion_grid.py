"""bench/quality/fusion_grid.py: the grid's fusion and comparison, on hand-made lists (no database, no model)."""

from pathlib import Path

import pytest

from bench.quality import fusion_grid, model


def test_a_page_counts_once_at_its_best_passage():
    assert fusion_grid.best_per_page([("a", 9.0), ("b", 5.0), ("a", 4.0)]) == [("a", 9.0), ("b", 5.0)]


def test_the_text_weight_moves_the_ranking_from_one_list_to_the_other():
    text = [("a", 10.0), ("b", 2.0), ("c", 1.0)]
    vector = [("c", 0.2), ("b", 0.3), ("a", 0.9)]  # distances: lower is better
    assert fusion_grid.by_score(1.0)(text, vector, False) == ["a", "b", "c"]
    assert fusion_grid.by_score(0.0)(text, vector, False) == ["c", "b", "a"]
    # At 0.65, text's far-ahead first page stays first; b, second in both lists, passes c.
    assert fusion_grid.by_score(0.65)(text, vector, False)[:2] == ["a", "b"]


def test_queries_are_scored_over_their_lists_or_the_servers_reply():
    row = {"relevant": ["x"], "server": ["x"], "text": [["a", 3.0], ["x", 1.0]], "vector": [["x", 0.1], ["a", 0.5]]}
    rows = [{**row, "complete": True}]
    assert fusion_grid.per_query(rows, None)[0]["mrr@10"] == 1.0
    assert fusion_grid.per_query(rows, fusion_grid.by_score(1.0))[0]["mrr@10"] == 0.5
    assert fusion_grid.per_query(rows, fusion_grid.by_score(0.0))[0]["mrr@10"] == 1.0


def test_a_change_is_a_mean_with_its_standard_error_and_the_queries_moved():
    before = [{"hit@10": 1.0, "mrr@10": value} for value in (1.0, 0.5, 0.5, 0.0)]
    after = [{"hit@10": 1.0, "mrr@10": value} for value in (1.0, 1.0, 0.25, 0.0)]
    # moved: 0, +0.5, -0.25, 0 -> mean 0.0625, stdev 0.315 / 2
    assert fusion_grid.change(after, before) == "+0.062 ± 0.157 (1 up, 1 down)"
    assert fusion_grid.metrics(after) == "1.000 / 0.562"


def test_a_local_model_embeds_the_queries_and_the_endpoint_is_nowhere():
    assert "LANCELOT_EMBED_MODEL_PATH" not in fusion_grid.model_env(None)
    env = fusion_grid.model_env(Path("/models/e5"))
    assert env["LANCELOT_EMBED_MODEL_PATH"] == "/models/e5"
    assert env["OPENAI_BASE_URL"] == model.NOWHERE


def test_the_weights_and_sets_are_lists():
    args = fusion_grid.parse(["db", "--sets", "debref-ja,debref-zh", "--weights", "0.6,0.7", "--against", "0.65"])
    assert (args.db_folder, args.sets, args.against) == (Path("db"), ["debref-ja", "debref-zh"], 0.65)
    assert args.weights == [0.6, 0.7]
    assert fusion_grid.parse([]).weights == pytest.approx(list(fusion_grid.WEIGHTS))


@pytest.mark.xdist_group("local_db")
def test_at_the_servers_weight_the_grid_gives_the_servers_reply(tmp_path, local_model):
    from tests.server import corpus
    from tests.server.local_corpus import DOCS, QUERIES

    from bench import common
    from lancelot_server.search.fusion import TEXT_WEIGHT

    db = tmp_path / "db"
    corpus.index(corpus.write_docs(tmp_path / "docs", DOCS), db, "--embed", f"local:{local_model}")
    tools = common.in_process_tools({**fusion_grid.model_env(local_model), "LANCEDB_PATH": str(db)})
    # Each question with a word of its answer's text, so that both lists hold something.
    queries = [{"query": f"{query} {DOCS[answer].split()[1]}", "relevant": [answer]} for query, answer in QUERIES]
    try:
        rows = fusion_grid.fused_lists(tools, queries)
    finally:
        tools.close()
    assert all(row["text"] and row["vector"] for row in rows)
    assert [row["server"][0] for row in rows] == [answer for _, answer in QUERIES]
    server = fusion_grid.per_query(rows, None)
    assert fusion_grid.per_query(rows, fusion_grid.by_score(TEXT_WEIGHT)) == server
    assert fusion_grid.metrics(server) == "1.000 / 1.000"
