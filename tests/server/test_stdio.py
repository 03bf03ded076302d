"""`scrub_line`: what reaches the SDK's stdio reader."""

from __future__ import annotations

import json

from lancelot_server.stdio import scrub_line


def test_a_lone_surrogate_escape_becomes_the_replacement_character_everywhere():
    line = '{"id": 1, "params": {"arguments": {"query": "chain \\ud83d", "tags": ["\\udc00x"], "\\ud800": 1}}}\n'
    scrubbed = json.loads(scrub_line(line))
    assert scrubbed["params"]["arguments"] == {"query": "chain \ufffd", "tags": ["\ufffdx"], "\ufffd": 1}


def test_well_formed_pairs_and_ordinary_lines_are_left_alone():
    emoji = '{"query": "bike \\ud83d\\udeb2"}\n'
    assert json.loads(scrub_line(emoji)) == {"query": "bike \U0001f6b2"}
    plain = '{"query": "\\\\ud800 is text here, an escaped backslash"}\n'
    assert scrub_line(plain) == plain
    assert scrub_line("not json \\ud800\n") == "not json \\ud800\n"
