"""docs/tools.md's worked example of searching, then reading on, replayed on the sample folder it names."""

from __future__ import annotations

import json
import re

from tests.docs import pages

from lancelot_schema.settings import resolve
from lancelot_server.storage.store import Store
from lancelot_server.tools import Tools


def test_the_worked_example_is_what_the_tools_answer_on_the_sample_folder(indexed_db):
    example = pages.section("Searching, then reading on", pages.page("tools.md"))
    search_call, read_call = (json.loads(block) for block in pages.code_blocks(example, "json"))
    settings = resolve({"LANCEDB_PATH": str(indexed_db)})
    tools = Tools(Store(settings.db_path), settings)
    try:
        top = tools.search(**search_call["arguments"])["hits"][0]
        reading = tools.read(**read_call["arguments"])
    finally:
        tools.close()
    assert f'"id": "{top["id"]}"' in example and f'"lines": [{top["lines"][0]}, {top["lines"][1]}]' in example
    assert f'"passage": {top["passage"]}' in example and top["heading"] == "Fixing a flat tyre > Patching"
    assert read_call["arguments"]["id"] == top["id"]
    numbers = [passage["number"] for passage in reading.reply["passages"]]
    assert f"passages {numbers[0]}–{numbers[-1]} of the page's {reading.reply['total']}" in example
    closing = re.search(r"ending `(Passages [^`]+)`", example)
    assert closing is not None and closing.group(1) in reading.text
    assert f"lines {top['lines'][0]}–{top['lines'][1]}" in example
