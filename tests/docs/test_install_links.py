"""The one-click install links decode to a server entry that runs `uvx lancelot-server` with LANCEDB_PATH.

The links are read from docs/clients.md (where users find them) and compared with `scripts/install-links`.
Formats: VS Code's MCP URL handler (`vscode:mcp/install?` + URL-encoded JSON) and Cursor's deeplink
(`cursor://anysphere.cursor-deeplink/mcp/install?name=…&config=` + base64 JSON).
"""

import base64
import binascii
import json
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from tests.docs import pages
from tests.docs.pages import assert_runs_the_published_server

ROOT = Path(__file__).resolve().parents[2]
VSCODE_PREFIX = "vscode:mcp/install?"
VSCODE_WEB_PREFIX = "https://insiders.vscode.dev/redirect?url="
CURSOR_PREFIX = "cursor://anysphere.cursor-deeplink/mcp/install?"
# A link ends where Markdown or prose resumes.
LINK = re.compile(r"(?:vscode:mcp/install\?|https://insiders\.vscode\.dev/redirect\?|cursor://)[^\s)`<>\"\]]+")


def page_links() -> list[str]:
    return LINK.findall(pages.section("Install links", pages.page("clients.md")))


def generated_links() -> list[str]:
    out = subprocess.run(
        [sys.executable, ROOT / "scripts" / "install-links"], capture_output=True, text=True, timeout=60, check=True
    )
    return [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]


def links_starting(prefix: str) -> list[str]:
    found = [link for link in page_links() if link.startswith(prefix)]
    assert found, f"docs/clients.md has no link starting {prefix}"
    return found


def decode_vscode(link: str) -> dict:
    assert link.startswith(VSCODE_PREFIX)
    # The whole query is one URL-encoded JSON object, not key=value pairs.
    return json.loads(urllib.parse.unquote(link.removeprefix(VSCODE_PREFIX)))


def decode_cursor(link: str) -> tuple[str, dict]:
    assert link.startswith(CURSOR_PREFIX)
    query = urllib.parse.parse_qs(link.removeprefix(CURSOR_PREFIX), strict_parsing=True)
    assert set(query) == {"name", "config"}
    (name,), (config,) = query["name"], query["config"]
    try:
        raw = base64.b64decode(config, validate=True)
    except binascii.Error as error:  # a raw "+" read as a space lands here
        pytest.fail(f"config is not valid base64: {error}")
    return name, json.loads(raw)


def test_the_page_has_exactly_the_generated_links():
    assert sorted(page_links()) == sorted(generated_links())


def test_vscode_link_runs_the_server_and_asks_for_the_database_path():
    for link in links_starting(VSCODE_PREFIX):
        entry = decode_vscode(link)
        assert entry["name"] == "lancelot"
        path = assert_runs_the_published_server(entry)
        match = re.fullmatch(r"\$\{input:([\w.-]+)\}", path)
        assert match, path
        inputs = {item["id"]: item for item in entry["inputs"]}
        assert inputs[match.group(1)]["type"] == "promptString"
        assert "absolute" in inputs[match.group(1)]["description"].lower()


def test_vscode_web_link_redirects_to_the_same_install_link():
    vscode = set(links_starting(VSCODE_PREFIX))
    for link in links_starting(VSCODE_WEB_PREFIX):
        (target,) = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["url"]
        assert target in vscode


def test_cursor_link_runs_the_server_with_the_database_path():
    for link in links_starting(CURSOR_PREFIX):
        name, config = decode_cursor(link)
        assert name == "lancelot"
        assert_runs_the_published_server(config)
        assert set(config) <= {"command", "args", "env"}


def test_a_broken_cursor_link_is_caught():
    (link,) = links_starting(CURSOR_PREFIX)
    config = link.rsplit("config=", 1)[1]
    bad = link.replace(config, urllib.parse.quote(base64.b64encode(b'{"command":"npx"}').decode()))
    with pytest.raises(AssertionError):
        assert_runs_the_published_server(decode_cursor(bad)[1])
