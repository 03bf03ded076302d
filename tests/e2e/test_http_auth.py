"""`lancelot --http` with authentication, as a real process on 127.0.0.1: static bearer tokens from a file
(refusals, the SDK client with a token, rotation without a restart, what the log shows), and the refusal
to serve a network address without auth. OAuth with a JWKS served by the test: test_http_oauth.py."""

import json
import os
import subprocess
import time

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.e2e.test_http_server import BIN, Running, environment, free_port, post, rpc

TOKEN = "ci-token-0123456789abcdef"
NEW = "rotated-token-0123456789ab"
LIST = rpc("tools/list")


def bearer(token):
    return {"authorization": f"Bearer {token}"}


def tokens_in(folder):
    file = folder / "tokens"
    file.write_text(f"ci {TOKEN}\n")
    return file


def guarded_by(file, folder, lancelot_db):
    return Running(folder, environment(lancelot_db, LANCELOT_AUTH_TOKENS_FILE=str(file)))


@pytest.fixture
def tokens_file(tmp_path):
    return tokens_in(tmp_path)


@pytest.fixture
def server(tmp_path, lancelot_db, tokens_file):
    with guarded_by(tokens_file, tmp_path, lancelot_db) as running:
        yield running


# The tests that leave the tokens file as it is share one server, on one worker: a server's start is most of
# such a test's CPU (docs/decisions.md, "The suite's CPU, sixth pass").
SHARED = pytest.mark.xdist_group("http_auth_tokens")


@pytest.fixture(scope="module")
def guarded(tmp_path_factory, lancelot_db):
    folder = tmp_path_factory.mktemp("tokens")
    with guarded_by(tokens_in(folder), folder, lancelot_db) as running:
        yield running


@SHARED
def test_without_a_token_every_request_is_401_with_a_challenge_and_nothing_else_is_published(guarded):
    for headers in ({}, bearer("not-the-token-0123456789"), {"authorization": "Basic Y2k6c2VjcmV0"}):
        answer = post(guarded, LIST, headers)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith('Bearer realm="lancelot"')
        assert answer.json()["error"]["code"] == -32600
    assert "resource_metadata" not in answer.headers["www-authenticate"]
    well_known = f"http://127.0.0.1:{guarded.port}/.well-known/oauth-protected-resource/mcp"
    assert httpx.get(well_known, timeout=30).status_code == 404


async def four_tools(url, token):
    http = httpx2.AsyncClient(headers=bearer(token), timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        search = await client.call_tool("lancedb_search", {"query": "puncture patch", "mode": "text"})
        return names, search


@SHARED
def test_the_sdk_client_with_a_token_calls_the_tools_and_the_log_names_the_caller_not_the_token(guarded):
    names, search = anyio.run(four_tools, guarded.url, TOKEN)
    assert {"lancedb_search", "lancedb_read", "lancedb_status"} <= names
    assert not search.is_error and search.structured_content["count"] > 0
    lines = [line for line in guarded.log() if line.get("event") == "request"]
    assert {line.get("caller") for line in lines if line["status"] == 200} == {"ci"}
    assert TOKEN not in guarded.stderr.read_text()


def test_rewriting_the_token_file_rotates_tokens_without_a_restart(server, tokens_file):
    assert post(server, LIST, bearer(TOKEN)).status_code == 200
    tokens_file.write_text(f"ci-2 {NEW}\n")
    stamp = tokens_file.stat().st_mtime_ns + 2_000_000_000  # a different stamp even within one clock tick
    os.utime(tokens_file, ns=(stamp, stamp))
    deadline = time.monotonic() + 10
    while post(server, LIST, bearer(NEW)).status_code != 200:
        assert time.monotonic() < deadline, "the rotated token was never accepted"
        time.sleep(0.2)
    assert post(server, LIST, bearer(TOKEN)).status_code == 401
    assert any(line.get("event") == "token_file_reloaded" for line in server.log())


def _in_place(file, text):
    """Rewrite the file's bytes where they are: the same inode, as an editor that does not rename writes."""
    with file.open("r+") as handle:
        handle.truncate(0)
        handle.write(text)


def _accepted(server, token, expected, seconds=10):
    deadline = time.monotonic() + seconds
    while (post(server, LIST, bearer(token)).status_code == 200) != expected:
        assert time.monotonic() < deadline, f"the token was never {'accepted' if expected else 'refused'}"
        time.sleep(0.2)


def test_a_rewrite_keeping_inode_size_and_mtime_still_revokes(server, tokens_file):
    assert post(server, LIST, bearer(TOKEN)).status_code == 200
    before = tokens_file.stat()
    replacement = "ci-token-REVOKED-and-new1"
    assert len(replacement) == len(TOKEN)
    _in_place(tokens_file, f"ci {replacement}\n")
    os.utime(tokens_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = tokens_file.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    _accepted(server, TOKEN, False)
    assert post(server, LIST, bearer(replacement)).status_code == 200


def test_a_half_written_file_keeps_the_last_good_tokens_until_the_write_ends(server, tokens_file):
    assert post(server, LIST, bearer(TOKEN)).status_code == 200
    time.sleep(1.1)  # the next request re-reads the file
    _in_place(tokens_file, f"ci {TOKEN}\nci-2 {NEW[:5]}")  # cut mid-line, as a reader may find it
    assert post(server, LIST, bearer(TOKEN)).status_code == 200
    assert any(line.get("event") == "token_file_being_written" for line in server.log())
    _in_place(tokens_file, f"ci {TOKEN}\nci-2 {NEW}\n")
    _accepted(server, NEW, True)
    assert post(server, LIST, bearer(TOKEN)).status_code == 200


def test_a_network_bind_without_auth_refuses_to_start_and_says_how_to_fix_it(lancelot_db):
    command = [BIN / "lancelot", "--http", str(free_port()), "--host", "0.0.0.0"]
    run = subprocess.run(command, env=environment(lancelot_db), capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "Refusing to serve 0.0.0.0 without authentication" in run.stderr
    assert "--allow-unauthenticated" in run.stderr and "Traceback" not in run.stderr


def test_a_bad_token_setting_stops_the_start_with_its_name(lancelot_db):
    env = environment(lancelot_db, LANCELOT_AUTH_TOKENS="short")
    run = subprocess.run(
        [BIN / "lancelot", "--http", str(free_port())], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1
    assert "LANCELOT_AUTH_TOKENS token 1: the token is shorter than 16" in run.stderr


def test_the_explicit_opt_out_serves_a_network_address_and_warns(tmp_path, lancelot_db):
    with Running(tmp_path, environment(lancelot_db), "--host", "0.0.0.0", "--allow-unauthenticated") as running:
        assert post(running, LIST).status_code == 200
        events = {line.get("event"): line for line in running.log()}
        assert "auth_off" in events and events["serving"]["auth"] == "none"


@SHARED
def test_tokens_also_guard_a_loopback_server_and_the_serving_line_says_so(guarded):
    assert post(guarded, LIST).status_code == 401
    assert next(line for line in guarded.log() if line.get("event") == "serving")["auth"] == "tokens"
    assert json.loads(post(guarded, LIST, bearer(TOKEN)).text)["result"]["tools"]
