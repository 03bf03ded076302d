"""The languages `--language` takes: names, aliases, and options that Lance accepts and that split and
stem words as each language needs, checked on a real Lance index."""

import lance
import pyarrow as pa
import pytest

from lancelot_schema import languages


def test_names_are_canonical_in_any_case_and_cjk_has_the_names_people_use():
    assert languages.canonical("French") == "french"
    assert languages.canonical(" GERMAN ") == "german"
    assert {languages.canonical(name) for name in ("japanese", "Chinese", "korean", "CJK")} == {"cjk"}
    assert languages.canonical("klingon") is None
    assert languages.problem("english") is None


def test_an_unknown_language_is_named_with_every_choice():
    problem = languages.problem("klingon") or ""
    assert "'klingon'" in problem
    assert all(name in problem for name in languages.NAMES)


def test_english_keeps_the_options_tables_were_built_with_before_languages():
    # The indexer rebuilds an index whose options differ: English tables built before must not be.
    assert languages.FTS_PARAMS[languages.DEFAULT] == {
        "with_position": True,
        "base_tokenizer": "simple",
        "language": "English",
        "stem": True,
        "lower_case": True,
        "ascii_folding": True,
        "remove_stop_words": True,
    }


def matches(tmp_path, language, text, query):
    dataset = lance.write_dataset(pa.table({"text": [text]}), tmp_path / f"{language}.lance", mode="overwrite")
    dataset.create_scalar_index("text", "INVERTED", **languages.FTS_PARAMS[language])
    return dataset.to_table(full_text_query=query, columns=["text"]).num_rows == 1


@pytest.mark.parametrize("language", languages.NAMES)
def test_lance_builds_an_index_for_every_language(tmp_path, language):
    assert matches(tmp_path, language, "Lancelot 2026 lancelot-index", "lancelot")


@pytest.mark.parametrize(
    ("language", "text", "query"),
    [
        ("english", "running the tests", "runs"),
        ("french", "les maisons anciennes", "maison"),
        ("german", "die Katzen schlafen", "Katze"),
        ("spanish", "las casas blancas", "casa"),
        ("russian", "новые книги", "книга"),
        ("cjk", "パッケージ管理システムの使い方", "管理"),
        ("cjk", "软件包管理系统的基本用法", "软件包"),
        ("cjk", "네트워크 설정 파일", "설정"),
    ],
)
def test_each_language_finds_another_form_of_a_word(tmp_path, language, text, query):
    assert matches(tmp_path, language, text, query)


def test_none_matches_whole_words_only_and_english_does_not_split_cjk(tmp_path):
    assert not matches(tmp_path, "none", "running the tests", "runs")
    assert matches(tmp_path, "none", "running the tests", "running")
    assert not matches(tmp_path, "english", "パッケージ管理システムの使い方", "管理")


def test_only_english_leaves_stop_words_out(tmp_path):
    assert not matches(tmp_path, "english", "the cat", "the")
    assert matches(tmp_path, "french", "le chat", "le")
    assert matches(tmp_path, "none", "the cat", "the")


def test_cjk_splits_names_with_dots_as_the_english_index_does(tmp_path):
    assert matches(tmp_path, "cjk", "編集 /etc/apt/sources.list ファイル", "sources")
    assert matches(tmp_path, "cjk", "编辑 file.txt 文件", "txt")
