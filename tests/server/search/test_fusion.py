import pytest

from lancelot_server.search.fusion import relative_score_fusion as fuse
from lancelot_server.search.fusion import scaled


def test_scores_are_scaled_from_the_worst_to_the_best_of_their_list():
    assert scaled([8.0, 6.0, 4.0]) == [1.0, 0.5, 0.0]
    assert scaled([0.2, 0.3, 0.6], lower_is_better=True) == pytest.approx([1.0, 0.75, 0.0])
    # A list that holds every match: what it leaves out scores 0, so its last hit keeps its share.
    assert scaled([8.0, 6.0, 4.0], floor=0.0) == [1.0, 0.75, 0.5]
    assert scaled([3.0]) == [1.0] and scaled([2.0, 2.0]) == [1.0, 1.0] and scaled([]) == []


def test_a_clear_lead_in_one_list_beats_a_flat_other_list():
    # Text: `title` far ahead. Vector: distances that barely differ, `other` nearest.
    text = list(zip(["title", "b", "c"], scaled([20.0, 4.0, 3.0], floor=0.0), strict=True))
    vector = list(zip(["other", "c", "title"], scaled([0.450, 0.452, 0.455], lower_is_better=True), strict=True))
    fused = fuse([text, vector], (0.55, 0.45))
    assert [item for item, _ in fused][:2] == ["title", "other"]


def test_agreement_beats_the_top_of_one_list_when_the_lists_are_close():
    text = list(zip(["a", "both", "c"], [1.0, 0.9, 0.0], strict=True))
    vector = list(zip(["d", "both", "e"], [1.0, 0.9, 0.0], strict=True))
    fused = fuse([text, vector], (0.5, 0.5))
    assert fused[0] == ("both", pytest.approx(0.9))
    assert [item for item, _ in fused[1:3]] == ["a", "d"]  # 0.5 each: the better rank, then the earlier list


def test_fused_scores_are_weighted_sums_higher_is_better():
    fused = dict(fuse([[("a", 1.0), ("b", 0.5)], [("b", 1.0)]], (0.6, 0.4)))
    assert fused == {"a": pytest.approx(0.6), "b": pytest.approx(0.6 * 0.5 + 0.4)}


def test_items_are_matched_by_key_keep_their_first_appearance_and_count_once_per_list():
    text = [({"id": "1", "from": "bm25"}, 1.0), ({"id": "2", "from": "bm25"}, 0.2), ({"id": "2", "from": "bm25"}, 0.1)]
    vector = [({"id": "2", "from": "vector"}, 1.0), ({"id": "3", "from": "vector"}, 0.0)]
    fused = fuse([text, vector], (0.5, 0.5), key=lambda hit: hit["id"])
    assert [(hit["id"], score) for hit, score in fused] == [("2", pytest.approx(0.6)), ("1", 0.5), ("3", 0.0)]
    assert fused[0][0]["from"] == "bm25"


def test_limit_empty_rankings_and_bad_weights():
    assert fuse([[("a", 1.0)], [("b", 1.0)]], (0.4, 0.6), limit=1) == [("b", pytest.approx(0.6))]
    assert fuse([[("a", 1.0)]], (1.0,), limit=0) == []
    assert fuse([[], []], (0.5, 0.5)) == [] and fuse([], ()) == []
    with pytest.raises(ValueError, match="1 weights for 2 rankings"):
        fuse([[("a", 1.0)], [("b", 1.0)]], (1.0,))
