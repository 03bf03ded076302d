"""The stop words the server recognises are the ones a real English full-text index leaves out."""

from __future__ import annotations

import lance
import lancedb
import pyarrow as pa
from lancedb.query import MatchQuery

from lancelot_schema.languages import DEFAULT, FTS_PARAMS
from lancelot_server.search.core import STOP_WORDS, only_stop_words

KEPT = ["very", "any", "would", "once", "only", "python", "install", "hours"]


def test_every_stop_word_is_one_the_index_drops_and_other_words_are_kept(tmp_path):
    words = sorted(STOP_WORDS) + KEPT
    dataset = lance.write_dataset(pa.table({"text": [f"{word} zzz" for word in words]}), str(tmp_path / "t.lance"))
    dataset.create_scalar_index("text", "INVERTED", **FTS_PARAMS[DEFAULT])
    table = lancedb.connect(str(tmp_path)).open_table("t")
    dropped = {word for word in words if not table.search(MatchQuery(word, "text"), query_type="fts").to_list()}
    assert dropped == STOP_WORDS


def test_only_stop_words_looks_past_case_and_punctuation():
    assert only_stop_words("The, and OF the!") == ["the", "and", "of"]
    assert only_stop_words("the python") is None
    assert only_stop_words("?!") is None
