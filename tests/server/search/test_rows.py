"""Rows into hits: AnythingLLM's header, JSON-safe metadata."""

from __future__ import annotations

from datetime import datetime

from lancelot_server.search.rows import json_value, split_header


def test_the_anythingllm_header_is_split_off():
    text = (
        "<document_metadata>\nsourceDocument: a.pdf\npublished: 1/2/2025, 10:00:00 AM\n"
        "source: https://x.example/a?b=c:d\n</document_metadata>\n\nBody text."
    )
    body, fields = split_header(text)
    assert body == "Body text."
    assert fields == {
        "sourceDocument": "a.pdf",
        "published": "1/2/2025, 10:00:00 AM",
        "source": "https://x.example/a?b=c:d",
    }


def test_text_without_a_header_or_with_an_unclosed_one_is_left_alone():
    assert split_header("Plain text.") == ("Plain text.", {})
    assert split_header("<document_metadata>\nkey: value\nno end") == ("<document_metadata>\nkey: value\nno end", {})


def test_metadata_values_become_json():
    assert json_value(datetime(2025, 1, 2, 3, 4, 5)) == "2025-01-02T03:04:05"
    assert json_value(b"\x01\xff") == "01ff"
    assert json_value(float("nan")) is None
    assert json_value({"a": [1, 2.5, None]}) == {"a": [1, 2.5, None]}
