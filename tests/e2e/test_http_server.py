"""`lancelot --http` as a real process on a loopback port: every status rule over raw HTTP, then the MCP
SDK's Streamable HTTP client (each protocol era) calling the tools over examples/docs."""

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from tests.support.indexing import run_index

# One worker runs this module when the suite runs on several: the module's server, made once.
pytestmark = pytest.mark.xdist_group("http_server")

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ACCEPT = {"accept": "application/json, text/event-stream"}
HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
SENTINEL = "zebra sentinel 4711"  # a query that must never reach the log at info level


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Running:
    """A `lancelot --http` process; its stdout and stderr go to files the tests can read at any time."""

    def __init__(self, folder, env, *args, prefix=()):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.stdout, self.stderr = folder / "stdout", folder / "stderr"
        command = [*prefix, BIN / "lancelot", "--http", str(self.port), *args]
        with self.stdout.open("w") as out, self.stderr.open("w") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        try:
            self._listening(time.monotonic() + 60)
        except BaseException:
            self.process.kill()  # one that never listened must not outlive the test
            self.process.wait(timeout=30)
            raise

    def _listening(self, deadline):
        while True:
            assert self.process.poll() is None, self.stderr.read_text()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "lancelot --http never listened"
                time.sleep(0.05)

    def log(self):
        return [json.loads(line) for line in self.stderr.read_text().splitlines() if line.startswith("{")]

    def stop(self):
        self.process.terminate()
        return self.process.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        assert self.stop() == 0


def environment(database, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCE", "OPENAI", "EMBEDDING"))}
    return {**env, "LANCEDB_PATH": str(database), **extra}


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "lancelot-db"
    run_index(ROOT / "examples" / "docs", db, "--quiet")
    return db


@pytest.fixture(scope="module")
def server(tmp_path_factory, database):
    running = Running(tmp_path_factory.mktemp("server"), environment(database))
    yield running
    assert running.stop() == 0


def post(server, body, headers=None, path="/mcp"):
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": "application/json", **ACCEPT, **(headers or {})}
    return httpx.post(f"http://127.0.0.1:{server.port}{path}", content=content, headers=headers, timeout=30)


def rpc(method, params=None):
    return {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}


def raw(server, head, body_parts=()):
    """Send `head` (and then each body part, while the server has not answered) on a raw socket."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head)
        sock.setblocking(False)
        answer = b""
        for part in body_parts:
            try:
                sock.sendall(part)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.01)
            try:
                answer += sock.recv(65536)
            except BlockingIOError:
                continue
            if answer:
                break
        sock.setblocking(True)
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer


def head(server, extra):
    host = f"Host: 127.0.0.1:{server.port}".encode()
    lines = [b"POST /mcp HTTP/1.1", host, b"Content-Type: application/json", b"Accept: application/json"]
    return b"\r\n".join([*lines, *extra]) + b"\r\n\r\n"


def chunked(size, piece=8192):
    sent = 0
    while sent < size:
        yield b"%x\r\n" % piece + b"x" * piece + b"\r\n"
        sent += piece


# --- every status rule, over raw HTTP ------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/other", "/mcp/more"])
def test_a_path_other_than_mcp_is_404(server, path):
    assert post(server, rpc("tools/list"), path=path).status_code == 404


def test_a_request_with_an_origin_is_403_when_no_origin_is_allowed(server):
    answer = post(server, rpc("tools/list"), {"origin": f"http://127.0.0.1:{server.port}"})
    assert answer.status_code == 403
    assert "Origin" in answer.json()["error"]["message"]


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:80", "127.0.0.1:1"])
def test_a_host_not_allowed_is_403(server, host):
    assert post(server, rpc("tools/list"), {"host": host}).status_code == 403


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_the_loopback_names_with_the_port_are_allowed(server, host):
    assert post(server, rpc("tools/list"), {"host": f"{host}:{server.port}"}).status_code == 200


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_with_allow_post_and_never_open_a_stream(server, method):
    answer = httpx.request(method, server.url, headers={"accept": "text/event-stream"}, timeout=10)
    assert answer.status_code == 405
    assert answer.headers["allow"] == "POST"


def test_a_declared_length_over_64_kb_is_413_before_the_body_is_sent(server):
    status, _ = raw(server, head(server, [b"Content-Length: 100000"]))
    assert status == 413


def test_a_chunked_body_over_64_kb_is_413_while_it_is_still_being_sent(server):
    status, _ = raw(server, head(server, [b"Transfer-Encoding: chunked"]), chunked(1_000_000))
    assert status == 413


def test_content_length_with_transfer_encoding_is_400_and_the_connection_closed(server):
    # Two framings at once is how requests are smuggled past proxies (RFC 9112 section 6.3): neither is trusted.
    status, answer = raw(server, head(server, [b"Content-Length: 10", b"Transfer-Encoding: chunked"]), chunked(20_000))
    assert status == 400
    assert b"connection: close" in answer.lower()


@pytest.mark.parametrize("body", [b"not json", b"{", b""])
def test_a_body_that_is_not_json_is_400(server, body):
    answer = post(server, body)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == -32700


def test_a_lone_surrogate_escape_is_answered_as_over_stdio(server):
    # JSON.stringify writes a string cut through an emoji as a lone "\\ud83d"; stdio makes it U+FFFD.
    body = rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": "chain \ud83d", "mode": "text"}})
    wire = json.dumps(body).encode()
    assert b"\\ud83d" in wire  # json.dumps writes the lone escape just as JSON.stringify does
    answer = post(server, wire)
    assert answer.status_code == 200
    assert answer.json()["result"]["structuredContent"]["query"] == "chain \ufffd"
    assert answer.json()["result"]["structuredContent"]["count"] >= 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([rpc("ping")], "Invalid Request: batches are not supported; send one message per POST"),
        ({**rpc("ping"), "id": {"a": 1}}, 'Invalid Request: "id" must be a string or an integer'),
    ],
)
def test_a_batch_or_an_object_id_gets_a_short_json_rpc_error_of_our_own(server, body, message):
    answer = post(server, body)
    assert answer.status_code == 400
    assert answer.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


def test_an_unsupported_protocol_version_is_400(server):
    answer = post(server, rpc("tools/list"), {"mcp-protocol-version": "2019-01-01"})
    assert answer.status_code == 400
    assert "2025-03-26" in answer.json()["error"]["data"]["supported"]


def test_without_a_protocol_version_header_the_request_is_served_as_2025_03_26(server):
    answer = post(server, rpc("tools/list"))
    assert answer.status_code == 200
    assert len(answer.json()["result"]["tools"]) == 5


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_each_handshake_version_initializes_without_a_session(server, version):
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    answer = post(server, rpc("initialize", params))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in answer.headers
    assert answer.json()["result"]["protocolVersion"] == version


# --- the SDK's Streamable HTTP client ------------------------------------------------------------


async def four_tools(url, mode):
    async with Client(url, mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        search = await client.call_tool("lancedb_search", {"query": "vulcanising solution", "mode": "text"})
        query = await client.call_tool("lancedb_query", {"query": "chain lubricant", "mode": "text"})
        status = await client.call_tool("lancedb_status", {})
        version = await client.call_tool("lancedb_version", {})
        return client.protocol_version, names, search, query, status, version


@pytest.mark.parametrize(
    ("mode", "negotiated"), [("legacy", "2025-11-25"), ("auto", "2026-07-28"), ("2026-07-28", "2026-07-28")]
)
def test_the_sdk_client_calls_all_four_tools(server, database, mode, negotiated):
    version, names, search, query, status, versions = anyio.run(four_tools, server.url, mode)
    assert version == negotiated
    assert names == {"lancedb_search", "lancedb_query", "lancedb_read", "lancedb_status", "lancedb_version"}
    assert not any(result.is_error for result in (search, query, status, versions))
    assert search.structured_content["hits"][0]["id"] == "guide/puncture.md#3"
    assert "Chain care" in query.content[0].text
    assert str(database) in status.content[0].text
    assert "2026-07-28" in versions.content[0].text


def test_several_phrasings_in_one_call_over_http(server):
    async def calls():
        async with Client(server.url) as client:
            arguments = {"queries": ["vulcanising solution", "chain lubricant", SENTINEL], "mode": "text"}
            search = await client.call_tool("lancedb_search", arguments)
            query = await client.call_tool("lancedb_query", arguments)
            six = await client.call_tool("lancedb_search", {"queries": [f"chain {n}" for n in range(6)]})
            return search, query, six

    search, query, six = anyio.run(calls)
    reply = search.structured_content
    assert not search.is_error and reply["queries"][:2] == ["vulcanising solution", "chain lubricant"]
    found = {hit["id"]: hit["queries"] for hit in reply["hits"]}
    assert 0 in found["guide/puncture.md#3"] and any(1 in positions for positions in found.values())
    assert all(2 not in positions for positions in found.values())  # the sentinel's words are in no document
    assert "Found by queries: 0" in query.content[0].text
    assert six.is_error and "at most 5 phrasings" in six.content[0].text
    assert SENTINEL not in server.stderr.read_text()


# --- what the process writes ---------------------------------------------------------------------


def test_one_json_log_line_per_request_on_stderr_never_the_query_and_nothing_on_stdout(server):
    logged = len([line for line in server.log() if line["event"] == "request"])
    answer = post(server, rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": SENTINEL}}))
    assert answer.status_code == 200
    deadline = time.monotonic() + 30
    while len(requests := [line for line in server.log() if line["event"] == "request"]) == logged:
        assert time.monotonic() < deadline, "the request was never logged"  # written just after the answer
        time.sleep(0.01)
    last = requests[-1]
    assert {k: last[k] for k in ("method", "path", "status", "rpc_method", "tool")} == {
        "method": "POST",
        "path": "/mcp",
        "status": 200,
        "rpc_method": "tools/call",
        "tool": "lancedb_search",
    }
    assert last["duration_ms"] >= 0
    assert {line["status"] for line in requests} >= {200, 400, 403, 404, 405, 413}
    assert SENTINEL not in server.stderr.read_text()
    assert server.stdout.read_text() == ""


def test_a_public_bind_without_allowed_hosts_warns_and_accepts_any_host(tmp_path, database):
    with Running(tmp_path, environment(database), "--host", "0.0.0.0", "--allow-unauthenticated") as running:
        assert post(running, rpc("tools/list"), {"host": "search.example.com"}).status_code == 200
        assert any(line["event"] == "host_check_off" and line["level"] == "warning" for line in running.log())


def test_allowed_hosts_replace_the_loopback_defaults(tmp_path, database):
    with Running(tmp_path, environment(database, LANCELOT_ALLOWED_HOSTS="search.example.com")) as running:
        assert post(running, rpc("tools/list"), {"host": "search.example.com"}).status_code == 200
        assert post(running, rpc("tools/list")).status_code == 403


def test_allowed_origins_let_those_origins_call(tmp_path, database):
    origins = environment(database, LANCELOT_ALLOWED_ORIGINS="https://app.example, https://b.example")
    with Running(tmp_path, origins) as running:
        assert post(running, rpc("tools/list"), {"origin": "https://b.example"}).status_code == 200
        assert post(running, rpc("tools/list"), {"origin": "https://c.example"}).status_code == 403


def test_a_browser_page_on_an_allowed_origin_passes_the_cors_preflight_and_reads_the_answer(tmp_path, database):
    page = "https://app.example"
    with Running(tmp_path, environment(database, LANCELOT_ALLOWED_ORIGINS=page)) as running:
        asked = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}
        preflight = httpx.options(running.url, headers={"origin": page, **asked}, timeout=30)
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == page
        assert preflight.headers["access-control-allow-methods"] == "POST"
        answer = post(running, rpc("tools/list"), {"origin": page})
        assert answer.status_code == 200 and answer.json()["result"]["tools"]
        assert answer.headers["access-control-allow-origin"] == page
        stranger = httpx.options(running.url, headers={"origin": "https://c.example", **asked}, timeout=30)
        assert stranger.status_code == 403


def test_the_log_names_the_endpoint(server):
    serving = next(line for line in server.log() if line["event"] == "serving")
    assert re.fullmatch(rf"http://127\.0\.0\.1:{server.port}/mcp", serving["url"])


def test_host_without_http_is_a_usage_error():
    out = subprocess.run([BIN / "lancelot", "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "--host goes with --http" in out.stderr
    assert out.stdout == ""


def test_a_port_in_use_is_one_error_line_and_never_logged_as_serving(database):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [BIN / "lancelot", "--http", str(port)]
        out = subprocess.run(command, capture_output=True, text=True, timeout=60, env=environment(database))
    assert out.returncode == 1
    assert f"Error: Cannot listen on 127.0.0.1:{port}: Address already in use." in out.stderr
    assert "--http PORT" in out.stderr
    assert '"serving"' not in out.stderr
    assert "Traceback" not in out.stderr
    assert out.stdout == ""


def test_a_host_that_does_not_resolve_is_one_error_line(database):
    out = subprocess.run(
        [BIN / "lancelot", "--http", str(free_port()), "--host", "no-such-host.invalid", "--allow-unauthenticated"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(database),
    )
    assert out.returncode == 1
    assert "Error: Cannot listen on no-such-host.invalid: the name does not resolve" in out.stderr
    assert "host_check_off" not in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("delay", [0, 0.05, 0.1, 0.2])
def test_a_stop_soon_after_it_listens_exits_zero(tmp_path, database, delay):
    """The table opens in a background thread from the start; a stop that comes first waits for it, since a
    process that exits while that thread is inside Lance can abort (-6) instead of exiting 0. That is rare, so
    this test seldom catches a regression; tests/server/storage/test_prepare.py's settle test always does."""
    running = Running(tmp_path, environment(database))
    time.sleep(delay)
    assert running.stop() == 0, running.stderr.read_text()
    assert "Traceback" not in running.stderr.read_text()
