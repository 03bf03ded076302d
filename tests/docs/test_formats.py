"""docs/formats.md names the file extensions the indexer reads, and only those."""

import re

from tests.docs import pages

from lancelot_indexer.documents import walk


def test_the_extensions_read_are_the_walkers():
    body = pages.section("What is read", pages.page("formats.md"))
    match = re.search(r"whose name ends in (.*?) \(in any case\)", body, re.DOTALL)
    assert match, "the sentence naming the extensions is gone"
    assert set(re.findall(r"`(\.\w+)`", match.group(1))) == set(walk.EXTENSIONS)
