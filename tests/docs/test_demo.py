"""README's sample run, `scripts/demo [DOCS]`, run for real: a folder indexed, searched through the server, and
the printed Claude Code line, which starts the same server on the same database.

The test runs `scripts/demo.py` (what `scripts/demo` execs after setting up) with this environment's
Python, so the real `lancelot-index` and `lancelot` of `.venv/bin` do the work.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.docs import pages
from tests.docs.stdio_session import call_tools, isolated
from tests.support.claude_code import claude_mcp_add

DEMO = pages.ROOT / "scripts" / "demo.py"
BIN = Path(sys.executable).parent


def demo(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, DEMO, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def connects(out: str, db: Path) -> tuple[list[str], dict[str, str]]:
    """The demo's last words: the Claude Code line for `db` with this environment's server, then where the
    other clients' configurations come from. Returns the line's server command and variables."""
    _, ending = out.split("\nGive this database to Claude Code:\n")
    (line,) = [line.strip() for line in ending.splitlines() if line.strip().startswith("claude mcp add ")]
    env, options, names, command = claude_mcp_add(line)
    assert (names, options, env) == (["lancelot"], {}, {"LANCEDB_PATH": str(db)})
    assert command == [str(BIN / "lancelot")]
    assert f"`{BIN / 'lancelot-init'} --db {db}`\nprints their configuration" in ending
    assert "scripts/install" in ending
    return command, env


def test_readme_offers_the_demo_in_its_quick_start():
    (commands,) = pages.code_blocks(pages.section("Or try it on a sample first", pages.readme()), "sh")
    assert re.search(r"^scripts/demo\b", commands, re.MULTILINE)
    assert re.search(r"^scripts/demo ~/notes\b", commands, re.MULTILINE)  # a folder of one's own
    wrapper = (pages.ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    assert 'exec "$root/.venv/bin/python" "$root/scripts/demo.py" "$@"' in wrapper


def test_the_demo_indexes_the_sample_folder_and_finds_answers_through_the_server(tmp_path):
    db = tmp_path / "demo-db"
    done = demo("--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert "tools: lancedb_search, lancedb_query, lancedb_read, lancedb_status, lancedb_version" in out
    assert "\ntable documents: 4 documents, 9 passages, search: text\n" in out
    out, _ = out.split("\nGive this database to Claude Code:\n")
    connects(done.stdout, db)
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


def test_with_a_folder_the_demo_indexes_it_and_its_printed_line_serves_it(tmp_path, clean_env):
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "boiler.md").write_text("# Boiler\n\nBleed the radiators every October.\n", encoding="utf-8")
    (docs / "bins.md").write_text("# Bins\n\nThe recycling goes out on Tuesday night.\n", encoding="utf-8")
    done = demo("notes", "--db", "db", cwd=tmp_path)  # both relative to where the demo is run
    assert done.returncode == 0, done.stderr
    out, db = done.stdout, tmp_path / "db"
    assert out.startswith(f"$ lancelot-index {docs} {db}\n")
    assert "\ntable documents: 2 documents, 2 passages, search: text\n" in out
    assert "\n? " not in out  # the sample's questions belong to the sample
    assert f'Ask it something: scripts/demo {docs} --ask "your question"' in out
    command, env = connects(out, db)
    (found,) = call_tools(command[0], command[1:], isolated(clean_env, **env), [("lancedb_search", {"query": "bins"})])
    assert found.structured_content["hits"][0]["source"] == "bins.md"


def test_questions_about_a_folder_are_asked_with_ask(tmp_path):
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "boiler.md").write_text("# Boiler\n\nBleed the radiators every October.\n", encoding="utf-8")
    done = demo(docs, "--db", tmp_path / "db", "--ask", "radiators", "--ask", "bleed", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [block.splitlines()[0] for block in done.stdout.split("\n? ")[1:]] == ["radiators", "bleed"]
    assert "  1. Boiler  [boiler.md > Boiler]" in done.stdout
    assert "Ask it something" not in done.stdout


def test_a_question_where_the_folder_goes_is_told_to_use_ask(tmp_path):
    done = demo("how often should I oil the chain", "--db", tmp_path / "db", cwd=tmp_path)
    assert done.returncode == 2
    assert "how often should I oil the chain is not a folder" in done.stderr
    assert "questions go after --ask" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "db").exists()
