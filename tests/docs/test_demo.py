"""README's sample run, `scripts/demo`, run for real: the sample folder indexed, then searched through the server.

The test runs `scripts/demo.py` (what `scripts/demo` execs after setting up) with this environment's
Python, so the real `lancelot-index` and `lancelot` of `.venv/bin` do the work.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests.docs import pages

DEMO = pages.ROOT / "scripts" / "demo.py"


def test_readme_offers_the_demo_in_its_quick_start():
    (commands,) = pages.code_blocks(pages.section("Or try it on a sample first", pages.readme()), "sh")
    assert re.search(r"^scripts/demo\b", commands, re.MULTILINE)
    assert "exec .venv/bin/python scripts/demo.py" in (pages.ROOT / "scripts" / "demo").read_text(encoding="utf-8")


def test_the_demo_indexes_the_sample_folder_and_finds_answers_through_the_server(tmp_path):
    db = tmp_path / "demo-db"
    done = subprocess.run(
        [sys.executable, DEMO, "--db", str(db)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert "tools: lancedb_search, lancedb_query, lancedb_read, lancedb_status, lancedb_version" in out
    # One answer block per sample question, each with the hit a person would expect first, then a read.
    searches, reading = out.split("\n$ lancedb_read ")
    blocks = searches.split("\n? ")[1:]
    assert [block.splitlines()[0] for block in blocks] == [
        "how often should I oil the chain",
        "when is the workshop open on Saturday",
        "vulcanis",
    ]
    chain, hours, patch = blocks
    # Then it reads on from the first answer's best hit: that passage and the next, with their lines.
    assert reading.startswith('{"id": "guide/chain-care.txt#'), reading
    assert "## Passage " in reading and "Source: guide/chain-care.txt" in reading
    assert re.search(r"^  1\. .*\[guide/chain-care\.txt\]", chain, re.MULTILINE), chain
    assert re.search(r"^  1\. Opening hours and policies  \[hours\.html", hours, re.MULTILINE), hours
    assert "1 hit, text (substring) search" in patch
    assert "vulcanising" in patch
    # The database is kept where --db said, and is a real table the server read.
    assert (db / "documents.lance").is_dir()
