import pytest

from lancelot_server.fusion import reciprocal_rank_fusion as rrf


def test_agreement_beats_the_top_of_one_list():
    text = ["a", "b", "c", "d"]
    vector = ["e", "c", "f", "b"]
    fused = rrf([text, vector])
    assert [item for item, _ in fused[:2]] == ["c", "b"]  # both lists hold them
    assert {item for item, _ in fused} == {"a", "b", "c", "d", "e", "f"}


def test_scores_are_sums_of_reciprocal_ranks_higher_is_better():
    fused = dict(rrf([["a", "b"], ["b"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    scores = [score for _, score in rrf([["a", "b", "c"], ["c", "d"]])]
    assert scores == sorted(scores, reverse=True)


def test_a_small_k_favours_the_head_of_each_list():
    lists = [["x", "p", "both"], ["y", "q", "both"]]
    assert rrf(lists, k=60)[0][0] == "both"  # 2/63 beats 1/61
    assert rrf(lists, k=0.1)[0][0] == "x"  # 1/1.1 beats 2/3.1


def test_ties_are_broken_by_best_rank_then_by_the_earlier_list():
    assert [item for item, _ in rrf([["a", "b"], ["c", "d"]])] == ["a", "c", "b", "d"]


def test_items_are_matched_by_key_and_keep_their_first_appearance():
    text = [{"id": "1", "score": 7.5, "from": "bm25"}, {"id": "2", "score": 3.0, "from": "bm25"}]
    vector = [{"id": "2", "score": 0.1, "from": "vector"}, {"id": "3", "score": 0.4, "from": "vector"}]
    fused = rrf([text, vector], key=lambda hit: hit["id"])
    assert [hit["id"] for hit, _ in fused] == ["2", "1", "3"]
    assert fused[0][0]["from"] == "bm25"


def test_a_repeat_within_one_list_counts_once_at_its_best_rank():
    assert dict(rrf([["a", "a", "b"]]))["a"] == pytest.approx(1 / 61)


def test_weights_and_limit():
    fused = rrf([["a"], ["b"]], weights=[1.0, 2.0], limit=1)
    assert fused == [("b", pytest.approx(2 / 61))]
    assert rrf([["a", "b"]], limit=0) == []


def test_empty_rankings_fuse_to_nothing_and_bad_arguments_are_refused():
    assert rrf([[], []]) == []
    assert rrf([]) == []
    with pytest.raises(ValueError, match="k must be positive"):
        rrf([["a"]], k=0)
    with pytest.raises(ValueError, match="1 weights for 2 rankings"):
        rrf([["a"], ["b"]], weights=[1.0])
