"""The languages `lancelot-index --language` knows: how each one's full-text index splits and folds words.

The indexer builds the table's full-text indexes with a language's options and stamps its name in the table
(`layout.META_LANGUAGE`); Lance tokenizes a query with the options stored in the index itself, so the
server needs the name only for what it does on its own: the English stop-word rule and `lancedb_status`.
"""

from __future__ import annotations

from typing import Any

DEFAULT = "english"
NONE = "none"
CJK = "cjk"

# Tokenizer options that every language shares: lower-casing, accents folded (`é` → `e`), positions
# kept for phrase queries.
_COMMON: dict[str, Any] = {"with_position": True, "lower_case": True, "ascii_folding": True}

# The stemmers Lance ships, by the name Lance knows them by.
STEMMED = (
    "Arabic", "Danish", "Dutch", "English", "Finnish", "French", "German", "Greek", "Hungarian", "Italian",
    "Norwegian", "Portuguese", "Romanian", "Russian", "Spanish", "Swedish", "Tamil", "Turkish",
)  # fmt: skip

# Other names people use for the CJK setting.
ALIASES = {"chinese": CJK, "japanese": CJK, "korean": CJK}


def _stemmed(language: str) -> dict[str, Any]:
    # Stop words are left out of the English index only: the server knows that list (a query made only of
    # them gets an honest empty reply); in other languages BM25's weighting makes them cheap instead.
    english = language == "English"
    return {**_COMMON, "base_tokenizer": "simple", "language": language, "stem": True, "remove_stop_words": english}


# Chinese, Japanese and Korean have no spaces between words: ICU's dictionary-based word segmentation
# splits them, and `/split` also splits at punctuation as `simple` does (`sources.list` → `sources`,
# `list`), chosen over plain ICU, character n-grams and jieba by measurement (docs/decisions.md, "Languages").
_CJK: dict[str, Any] = {**_COMMON, "base_tokenizer": "icu/split", "stem": False, "remove_stop_words": False}

FTS_PARAMS: dict[str, dict[str, Any]] = {
    **{name.lower(): _stemmed(name) for name in STEMMED},
    NONE: {**_COMMON, "base_tokenizer": "simple", "stem": False, "remove_stop_words": False},
    CJK: _CJK,
}
NAMES: tuple[str, ...] = tuple(sorted(FTS_PARAMS))


def canonical(name: str) -> str | None:
    """The language `name` stands for (any case, or an alias such as `japanese`), or None when unknown."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in FTS_PARAMS else None


def problem(name: str) -> str | None:
    """Why `name` is not a language `--language` takes, or None."""
    if canonical(name) is not None:
        return None
    choices = ", ".join(NAMES)
    return f"{name!r} is not a language this index knows; use one of: {choices} (or chinese, japanese, korean for cjk)."
