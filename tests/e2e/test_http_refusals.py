"""Every refusal `lancelot --http` makes carries a JSON-RPC error body, whichever layer makes it: the
connection (bytes that are no HTTP/1.1), the guard, or the MCP SDK behind it. A real process on 127.0.0.1,
spoken to with httpx and with raw bytes on a socket."""

import json
import random
import socket
import time
from collections import Counter

import httpx
import pytest
from tests.e2e.test_http_server import ACCEPT, Running, environment, rpc

# One worker runs this module when the suite runs on several: the module's server, made once.
pytestmark = pytest.mark.xdist_group("refusals_server")


JSON = {"content-type": "application/json"}
MODERN = {"mcp-protocol-version": "2026-07-28"}


@pytest.fixture(scope="module")
def server(tmp_path_factory, lancelot_db):
    running = Running(tmp_path_factory.mktemp("refusals"), environment(lancelot_db))
    yield running
    assert running.stop() == 0


def error_of(status, content_type, body):
    """The JSON-RPC error a refusal carries; fails unless it is one."""
    assert status >= 400
    assert content_type == "application/json", body
    message = json.loads(body)
    assert message["jsonrpc"] == "2.0" and "id" in message
    assert set(message["error"]) >= {"code", "message"}
    return message["error"]


@pytest.mark.parametrize(
    ("headers", "status", "says"),
    [
        pytest.param({**ACCEPT}, 415, "Content-Type: application/json", id="no content-type"),
        pytest.param({**ACCEPT, "content-type": "text/plain"}, 415, "Content-Type: application/json", id="text"),
        pytest.param({**ACCEPT, **MODERN}, 415, "Content-Type: application/json", id="no content-type, 2026"),
        pytest.param({**JSON, "accept": "text/html"}, 406, "Accept: application/json", id="html"),
        pytest.param({**JSON, "accept": "text/html", **MODERN}, 406, "Accept: application/json", id="html, 2026"),
        pytest.param({**JSON, **ACCEPT, "mcp-protocol-version": "1999-01-01"}, 400, "MCP-Protocol-Version", id="v"),
        pytest.param({**JSON, **ACCEPT, "host": "evil.example"}, 403, "Host", id="host"),
        pytest.param({**JSON, **ACCEPT, "origin": "https://evil.example"}, 403, "Origin", id="origin"),
    ],
)
def test_a_post_the_server_refuses_for_its_headers_gets_a_json_rpc_error(server, headers, status, says):
    answer = httpx.post(server.url, content=json.dumps(rpc("tools/list")).encode(), headers=headers, timeout=30)
    assert answer.status_code == status
    assert says in error_of(status, answer.headers.get("content-type"), answer.text)["message"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/mcp", 405), ("DELETE", "/mcp", 405), ("PUT", "/mcp", 405), ("POST", "/other", 404)],
)
def test_a_wrong_method_or_path_gets_a_json_rpc_error(server, method, path, status):
    answer = httpx.request(method, f"http://127.0.0.1:{server.port}{path}", headers={**JSON, **ACCEPT}, timeout=30)
    assert answer.status_code == status
    error_of(status, answer.headers.get("content-type"), answer.text)


def test_a_stream_asked_for_without_accepting_one_gets_a_json_rpc_error(server):
    # The SDK's 2026 entry answers this 406 with no body at all.
    listen = {**rpc("subscriptions/listen", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})}
    headers = {**JSON, "accept": "application/json", **MODERN}
    answer = httpx.post(server.url, content=json.dumps(listen).encode(), headers=headers, timeout=30)
    assert answer.status_code == 406
    assert "text/event-stream" in error_of(406, answer.headers.get("content-type"), answer.text)["message"]


def exchange(server, *parts):
    """Send raw bytes, a part at a time; the status, the Content-Type and the body of what comes back (the
    server closes the connection after each of these answers)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        for part in parts:
            try:
                sock.sendall(part.replace(b"HOST", f"127.0.0.1:{server.port}".encode()))
            except (BrokenPipeError, ConnectionResetError):
                break  # refused before the rest was sent
            time.sleep(0.1)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers.get("content-type"), body


def test_a_post_without_accept_gets_a_json_rpc_error(server):
    body = json.dumps(rpc("tools/list")).encode()
    head = b"POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nConnection: close\r\n"
    status, content_type, answer = exchange(server, head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert status == 406
    assert "Accept: application/json, text/event-stream" in error_of(status, content_type, answer)["message"]


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param([b"NONSENSE\r\n\r\n"], id="no request line"),
        pytest.param([b"POST /mcp HTTP/1.1\r\nHost: HOST\r\nno colon here\r\n\r\n"], id="bad header"),
        pytest.param([b"POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Length: ten\r\n\r\n"], id="bad length"),
        pytest.param([b"POST /mcp HTTP/1.1\r\nHost: HOST\r\nTransfer-Encoding: gzip\r\n\r\n"], id="coding"),
        pytest.param([b"POST /m\xc3\xbccp HTTP/1.1\r\nHost: HOST\r\n\r\n"], id="non-ascii target"),
        pytest.param([b"POST /mcp HTTP/1.1\r\nX-Big: " + b"a" * 20_000, b"\r\n\r\n"], id="head over 16 KB"),
    ],
)
def test_bytes_that_are_no_http_request_get_a_json_rpc_error(server, parts):
    status, content_type, body = exchange(server, *parts)
    assert status == 400
    assert "not a valid HTTP/1.1 request" in error_of(status, content_type, body)["message"]


METHODS = ["POST"] * 6 + ["GET", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"]
PATHS = ["/mcp"] * 6 + ["/mcp/", "/", "/other", "/mcp?x=1", "/.well-known/oauth-protected-resource", "/%ff"]
CHOICES = {
    "content-type": [None, "application/json", "text/plain", "", "application/json; charset=latin-1", "multipart/x"],
    "accept": [None, "application/json, text/event-stream", "", "text/html", "*/*", "text/event-stream", "a/b;q=x"],
    "mcp-protocol-version": [None, None, "2025-11-25", "2026-07-28", "garbage", "2019-01-01", "2025-11-25, 2026-07-28"],
    "origin": [None] * 4 + ["https://evil.example", "null"],
    "host": [None] * 5 + ["evil.example"],
}
BODIES = [
    rpc("tools/list"),
    rpc("ping"),
    rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": "chain", "mode": "text"}}),
    rpc(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}}
    ),
    rpc("subscriptions/listen"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "result": {}},
    [rpc("ping")],
    {},
    None,
    "[" * 5000,
    b"\xff\xfe not utf-8",
    b"",
    rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": "x" * 70_000}}),
]


def hostile_requests(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        headers = {name: value for name, options in CHOICES.items() if (value := rng.choice(options)) is not None}
        # A refusal before the body is read closes the connection, without saying so in a `Connection`
        # header: a client reusing it may find it closed. Each request on a connection of its own.
        headers["connection"] = "close"
        body = rng.choice(BODIES)
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        yield rng.choice(METHODS), rng.choice(PATHS), headers, content


def test_hundreds_of_hostile_requests_get_json_rpc_refusals_and_no_internal_error(server):
    statuses = Counter()
    with httpx.Client(timeout=30) as http:
        for method, path, headers, content in hostile_requests(300, seed=29):
            url = f"http://127.0.0.1:{server.port}{path}"
            answer = http.request(method, url, headers=headers, content=content if method != "GET" else None)
            statuses[answer.status_code] += 1
            assert answer.status_code != 500, (method, path, headers, answer.text)
            if answer.status_code >= 400 and method != "HEAD":
                error_of(answer.status_code, answer.headers.get("content-type"), answer.text)
    assert statuses[200] > 0 and len([status for status in statuses if status >= 400]) >= 6  # hostile, not only
    assert httpx.post(server.url, json=rpc("ping"), headers=ACCEPT, timeout=30).status_code == 200
    assert "Traceback" not in server.stderr.read_text()
