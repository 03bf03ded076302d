"""Every message docs/troubleshooting.md quotes is what the real commands print today.

Each case is run for real (the indexer, the server over stdio with the SDK's client, HTTP mode) in a
temporary folder that stands for `/home/you`. A quoted `…` stands for a part that varies (a parser's
own wording).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from tests.docs import pages
from tests.docs.stdio_session import call_tools, isolated
from tests.e2e.test_http_server import Running
from tests.server import corpus
from tests.support.fake_vectors import hashed_vector

BIN = Path(sys.executable).parent
HOME = "/home/you"


def quoted_messages(body: str) -> list[str]:
    return [line for block in pages.code_blocks(body, "text") for line in block.splitlines() if line.strip()]


def pattern(message: str) -> re.Pattern[str]:
    return re.compile(".+?".join(re.escape(part) for part in message.split("…")))


def missing(messages: list[str], printed: str) -> list[str]:
    return [message for message in messages if not pattern(message).search(printed)]


def test_the_section_quotes_messages_for_the_likely_failures():
    messages = quoted_messages(pages.page("troubleshooting.md"))
    assert len(messages) >= 5
    assert len(set(messages)) == len(messages)


def test_a_changed_word_or_path_is_caught():
    printed = "Error: The stored settings /home/you/.config/x are damaged (bad: line 1). Run it."
    assert missing(["The stored settings /home/you/.config/x are damaged (…). Run it."], printed) == []
    assert missing(["The stored settings /home/you/.config/x are broken (…). Run it."], printed) != []
    assert missing(["The stored settings /elsewhere/.config/x are damaged (…). Run it."], printed) != []


def indexer_output(home: Path, env: dict[str, str], *arguments: str) -> str:
    done = subprocess.run(
        [BIN / "lancelot-index", *arguments], cwd=home, env=env, capture_output=True, text=True, timeout=300
    )
    return done.stdout + done.stderr


def server_replies(env: dict[str, str], calls: list[tuple[str, dict]], cwd: Path) -> list[str]:
    """The text a person would read from each call: the error message, or the note of a fallback."""
    replies = []
    for result in call_tools(BIN / "lancelot-server", [], env, calls, cwd=cwd):
        if result.is_error:
            replies.append(result.content[0].text)
        else:
            assert result.structured_content is not None
            replies.append(result.structured_content.get("note", ""))
    return replies


def http_failures(home: Path, env: dict[str, str]) -> list[str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    folder = home / "http"
    folder.mkdir()
    messages = []
    with Running(folder, env) as server:
        for extra in ({"origin": "https://app.example"}, {"host": "lancelot.internal:3000"}):
            answer = httpx.post(server.url, json=body, headers=headers | extra, timeout=30)
            assert answer.status_code == 403
            messages.append(answer.json()["error"]["message"])
        # A second server on the same port; the page quotes the default port.
        taken = subprocess.run(
            [BIN / "lancelot", "--http", str(server.port)], env=env, capture_output=True, text=True, timeout=60
        )
        messages.append(taken.stderr.replace(f":{server.port}:", ":3000:"))
    return messages


@pytest.mark.slow
def test_every_quoted_message_is_what_the_commands_print(tmp_path, clean_env):
    home = tmp_path
    env = clean_env | {"XDG_CONFIG_HOME": str(home / ".config")}
    printed: list[str] = []

    (home / "docs").mkdir()
    printed.append(indexer_output(home, env, "docs", "lancelot-db"))  # no documents
    shutil.rmtree(home / "docs")
    shutil.copytree(pages.ROOT / "examples" / "docs", home / "docs")
    settings_file = home / ".config" / "lancelot" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text("{broken", encoding="utf-8")
    printed.append(indexer_output(home, env, "docs", "lancelot-db", "--quiet"))  # warns, then indexes
    settings_file.unlink()
    db, with_vectors = home / "lancelot-db", home / "with-vectors"
    shutil.copytree(db, with_vectors)
    corpus.add_vectors(with_vectors, "documents", "embedded", lambda text: hashed_vector(text, 8), 8)

    elsewhere = home / "elsewhere"  # where a client starts the server
    elsewhere.mkdir()
    search = ("lancedb_search", {"query": "chain"})
    printed += server_replies(isolated(env), [search], elsewhere)
    printed += server_replies(isolated(env, LANCEDB_PATH="lancelot-db"), [search], elsewhere)
    printed += server_replies(
        isolated(env, LANCEDB_PATH=str(db)),
        [
            ("lancedb_search", {"query": "chain", "table": "docs"}),
            ("lancedb_search", {"query": "chain", "mode": "vector"}),
        ],
        elsewhere,
    )
    vector_search = ("lancedb_search", {"query": "chain", "mode": "vector", "table": "embedded"})
    served = isolated(env, LANCEDB_PATH=str(with_vectors), LANCELOT_TABLES="embedded")
    printed += server_replies(served, [vector_search], elsewhere)
    printed += http_failures(home, env | {"LANCEDB_PATH": str(db)})

    output = "\n".join(printed).replace(str(home), HOME)
    assert missing(quoted_messages(pages.page("troubleshooting.md")), output) == [], output
