"""The Lambda handler with API Gateway HTTP API (payload format 2.0) events, over a real LanceDB database."""

import base64
import json
import random
from pathlib import Path

import pytest
from tests.support.indexing import run_index

from lancelot_server import lambda_handler
from lancelot_server.storage import lance_table

# One worker runs this module when the suite runs on several: the module's database, made once.
pytestmark = pytest.mark.xdist_group("lambda_db")

ROOT = Path(__file__).resolve().parents[2]
HOST = "abc123.execute-api.eu-west-1.amazonaws.com"
JSON_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """examples/docs indexed by the real lancelot-index (in this process)."""
    db = tmp_path_factory.mktemp("db") / "lancelot-db"
    run_index(ROOT / "examples" / "docs", db, "--quiet")
    return db


@pytest.fixture
def lambda_env(monkeypatch, tmp_path, database):
    """A cold container: the environment Lambda would give, and no state left from another test."""
    for name in ("OPENAI_API_KEY", "LANCELOT_ALLOWED_ORIGINS", "LANCELOT_ALLOWED_HOSTS", "LANCELOT_BASE_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANCEDB_PATH", str(database))
    # These tests are about the handler, not auth (below, and tests/server/auth/): an authorizer in front.
    monkeypatch.setenv("LANCELOT_ALLOW_UNAUTHENTICATED", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(lambda_handler, "_container", None)
    yield monkeypatch
    cold_start()


def cold_start():
    """Drop the warm container, as a new one would start (its event loop closed first)."""
    if lambda_handler._container is not None:
        lambda_handler._container.loop.close()
        lambda_handler._container = None


def event(body=None, *, method="POST", path="/", headers=None, encode=False, version=None, query=""):
    headers = {"host": HOST, "x-forwarded-proto": "https", **JSON_HEADERS, **(headers or {})}
    if version:
        headers["mcp-protocol-version"] = version
    raw = body if isinstance(body, str) or body is None else json.dumps(body)
    if encode and raw is not None:
        raw = base64.b64encode(raw.encode()).decode()
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "cookies": ["session=abc"],
        "headers": headers,
        "requestContext": {
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "198.51.100.7"},
            "stage": "$default",
        },
        "body": raw,
        "isBase64Encoded": encode,
    }


def rpc(method, params=None, id=1):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(tool, arguments=None):
    return rpc("tools/call", {"name": tool, "arguments": arguments or {}})


def answer(response):
    assert response["isBase64Encoded"] is False
    return json.loads(response["body"])


def test_initialize_answers_one_json_object_without_a_session(lambda_env):
    init = rpc(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )
    response = lambda_handler.handler(event(init), None)
    assert response["statusCode"] == 200
    assert response["headers"]["content-type"] == "application/json"
    assert "mcp-session-id" not in response["headers"]
    result = answer(response)["result"]
    assert result["serverInfo"]["name"] == "lancelot"
    assert result["protocolVersion"] == "2025-11-25"


def test_tools_list_names_the_five_tools(lambda_env):
    response = lambda_handler.handler(event(rpc("tools/list"), version="2025-11-25"), None)
    names = {tool["name"] for tool in answer(response)["result"]["tools"]}
    assert names == {"lancedb_search", "lancedb_query", "lancedb_read", "lancedb_status", "lancedb_version"}


def test_documents_are_listed_and_read_as_resources_and_a_hit_is_read_on(lambda_env):
    listed = answer(lambda_handler.handler(event(rpc("resources/list"), version="2025-11-25"), None))
    names = [resource["name"] for resource in listed["result"]["resources"]]
    assert names == ["README.md", "guide/chain-care.txt", "guide/puncture.md", "hours.html"]
    uri = listed["result"]["resources"][2]["uri"]
    read = answer(lambda_handler.handler(event(rpc("resources/read", {"uri": uri}), version="2025-11-25"), None))
    assert read["result"]["contents"][0]["text"].startswith("# Fixing a puncture\n")
    reading = answer(lambda_handler.handler(event(call("lancedb_read", {"id": "guide/puncture.md#3"})), None))
    assert [p["number"] for p in reading["result"]["structuredContent"]["passages"]] == [2, 3]


def test_each_tool_answers(lambda_env, database):
    search = answer(
        lambda_handler.handler(event(call("lancedb_search", {"query": "vulcanising solution", "mode": "text"})), None)
    )
    hits = search["result"]["structuredContent"]["hits"]
    assert hits[0]["id"] == "guide/puncture.md#3"
    query = answer(
        lambda_handler.handler(event(call("lancedb_query", {"query": "degrease lubricant", "mode": "text"})), None)
    )
    assert "Chain care" in query["result"]["content"][0]["text"]
    status = answer(lambda_handler.handler(event(call("lancedb_status")), None))
    assert status["result"]["isError"] is False
    assert str(database) in status["result"]["content"][0]["text"]
    version = answer(lambda_handler.handler(event(call("lancedb_version")), None))
    assert "2026-07-28" in version["result"]["content"][0]["text"]


def test_a_2026_client_discovers_and_calls_without_a_handshake(lambda_env):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    discover = event(
        rpc("server/discover", {"_meta": meta}), version="2026-07-28", headers={"mcp-method": "server/discover"}
    )
    assert "2026-07-28" in answer(lambda_handler.handler(discover, None))["result"]["supportedVersions"]
    search = call("lancedb_search", {"query": "workshop open Tuesday", "mode": "text"})
    search["params"]["_meta"] = meta
    headers = {"mcp-method": "tools/call", "mcp-name": "lancedb_search"}
    response = lambda_handler.handler(event(search, version="2026-07-28", headers=headers), None)
    assert response["statusCode"] == 200
    assert answer(response)["result"]["structuredContent"]["hits"][0]["title"] == "Opening hours and policies"


def test_a_base64_body_is_decoded(lambda_env):
    response = lambda_handler.handler(event(rpc("tools/list"), encode=True), None)
    assert response["statusCode"] == 200
    assert len(answer(response)["result"]["tools"]) == 5


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_with_allow(lambda_env, method):
    response = lambda_handler.handler(event(method=method), None)
    assert response["statusCode"] == 405
    assert response["headers"]["allow"] == "POST"


@pytest.mark.parametrize("encode", [False, True])
@pytest.mark.parametrize("declared", [None, "100"])
def test_a_body_over_64_kb_is_413_whatever_its_length_header_says(lambda_env, encode, declared):
    big = json.dumps(call("lancedb_search", {"query": "x" * 70_000}))
    headers = {"content-length": declared} if declared else {}
    response = lambda_handler.handler(event(big, encode=encode, headers=headers), None)
    assert response["statusCode"] == 413


def test_a_foreign_origin_is_403_and_a_listed_one_passes(lambda_env):
    assert (
        lambda_handler.handler(event(rpc("tools/list"), headers={"origin": "https://evil.example"}), None)["statusCode"]
        == 403
    )
    cold_start()
    lambda_env.setenv("LANCELOT_ALLOWED_ORIGINS", "https://app.example")
    response = lambda_handler.handler(event(rpc("tools/list"), headers={"origin": "https://app.example"}), None)
    assert response["statusCode"] == 200
    assert response["headers"]["access-control-allow-origin"] == "https://app.example"
    preflight = lambda_handler.handler(event(method="OPTIONS", headers={"origin": "https://app.example"}), None)
    assert preflight["statusCode"] == 204
    assert preflight["headers"]["access-control-allow-methods"] == "POST"


def test_the_host_is_checked_only_when_hosts_are_listed(lambda_env):
    assert lambda_handler.handler(event(rpc("tools/list")), None)["statusCode"] == 200
    cold_start()
    lambda_env.setenv("LANCELOT_ALLOWED_HOSTS", "search.example.com")
    assert lambda_handler.handler(event(rpc("tools/list")), None)["statusCode"] == 403
    ok = event(rpc("tools/list"), headers={"host": "search.example.com"})
    assert lambda_handler.handler(ok, None)["statusCode"] == 200


def test_the_base_path_is_the_endpoint_and_other_paths_are_404(lambda_env):
    lambda_env.setenv("LANCELOT_BASE_PATH", "/lancelot")
    assert lambda_handler.handler(event(rpc("tools/list"), path="/other"), None)["statusCode"] == 404
    assert lambda_handler.handler(event(rpc("tools/list"), path="/lancelot/mcp"), None)["statusCode"] == 404
    assert lambda_handler.handler(event(rpc("tools/list"), path="/lancelot", query="a=1"), None)["statusCode"] == 200


def test_without_a_base_path_every_path_is_served(lambda_env):
    for path in ("/", "/mcp", "/anything/here"):
        assert lambda_handler.handler(event(rpc("tools/list"), path=path), None)["statusCode"] == 200


def test_a_body_that_is_not_json_and_an_unknown_protocol_version_are_400(lambda_env):
    assert lambda_handler.handler(event("{not json"), None)["statusCode"] == 400
    response = lambda_handler.handler(event(rpc("tools/list"), version="2099-01-01"), None)
    assert response["statusCode"] == 400
    assert answer(response)["error"]["data"]["requested"] == "2099-01-01"


def test_a_warm_invocation_reuses_the_container_and_its_opened_table(lambda_env):
    opened = []
    real_open = lance_table.LanceTable.open

    def counting_open(*args):
        opened.append(args)
        return real_open(*args)

    lambda_env.setattr(lance_table.LanceTable, "open", staticmethod(counting_open))
    first = lambda_handler.handler(event(call("lancedb_search", {"query": "tyre levers", "mode": "text"})), None)
    cold = lambda_handler._container
    second = lambda_handler.handler(
        event(call("lancedb_search", {"query": "hiss bubbles", "mode": "text"}), encode=True), None
    )
    assert answer(first)["result"]["isError"] is False
    assert (
        answer(second)["result"]["structuredContent"]["hits"][0]["heading"] == "Fixing a flat tyre > Finding the hole"
    )
    assert lambda_handler._container is cold
    assert len(opened) == 1


# Authentication: the same rules as `lancelot --http` (tests/server/auth/test_bearer.py), in the handler.

TOKEN = "lambda-token-0123456789"


def test_with_no_auth_configured_and_no_opt_out_every_invocation_is_refused(lambda_env, capfd):
    lambda_env.delenv("LANCELOT_ALLOW_UNAUTHENTICATED")
    for _ in range(2):  # no container is kept: the next invocation is refused as well
        with pytest.raises(lambda_handler.UnsafeConfiguration, match="no authentication is configured"):
            lambda_handler.handler(event(rpc("tools/list"), version="2025-11-25"), None)
    assert lambda_handler._container is None
    assert "LANCELOT_ALLOW_UNAUTHENTICATED=1" in capfd.readouterr().err


def test_bad_auth_settings_are_refused_by_name(lambda_env):
    lambda_env.setenv("LANCELOT_OAUTH_ISSUER", "https://id.example")
    with pytest.raises(lambda_handler.UnsafeConfiguration, match="needs LANCELOT_OAUTH_RESOURCE"):
        lambda_handler.handler(event(rpc("tools/list"), version="2025-11-25"), None)


def test_tokens_guard_the_handler_and_a_good_one_is_answered(lambda_env):
    lambda_env.delenv("LANCELOT_ALLOW_UNAUTHENTICATED")
    lambda_env.setenv("LANCELOT_AUTH_TOKENS", TOKEN)
    refused = lambda_handler.handler(event(rpc("tools/list"), version="2025-11-25"), None)
    assert refused["statusCode"] == 401
    assert refused["headers"]["www-authenticate"] == 'Bearer realm="lancelot"'
    assert answer(refused)["error"]["code"] == -32600
    wrong = event(rpc("tools/list"), version="2025-11-25", headers={"authorization": "Bearer not-the-token-at-all"})
    assert lambda_handler.handler(wrong, None)["statusCode"] == 401
    good = event(
        call("lancedb_search", {"query": "puncture", "mode": "text"}), headers={"authorization": f"Bearer {TOKEN}"}
    )
    response = lambda_handler.handler(good, None)
    assert response["statusCode"] == 200
    assert answer(response)["result"]["structuredContent"]["count"] > 0


def test_oauth_on_lambda_publishes_the_metadata_and_challenges_with_it(lambda_env):
    lambda_env.delenv("LANCELOT_ALLOW_UNAUTHENTICATED")
    lambda_env.setenv("LANCELOT_OAUTH_ISSUER", "https://id.example")
    lambda_env.setenv("LANCELOT_OAUTH_RESOURCE", f"https://{HOST}/mcp")
    refused = lambda_handler.handler(event(rpc("tools/list"), path="/mcp", version="2025-11-25"), None)
    assert refused["statusCode"] == 401
    metadata_url = f"https://{HOST}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata_url}"' in refused["headers"]["www-authenticate"]
    published = lambda_handler.handler(event(method="GET", path="/.well-known/oauth-protected-resource/mcp"), None)
    assert published["statusCode"] == 200
    assert json.loads(published["body"])["authorization_servers"] == ["https://id.example"]


# Events API Gateway relays as they come: each is answered as `lancelot --http` answers those bytes.


def refusal(response, status, code):
    assert response["statusCode"] == status
    assert response["headers"]["content-type"] == "application/json"
    error = answer(response)["error"]
    assert error["code"] == code
    return error["message"]


@pytest.mark.parametrize("body", ["not base64!", "e30", "eyJqc29ucnBjIjoiMi4wIn0=x", "\u00e9t\u00e9"])
def test_a_body_flagged_base64_that_is_not_is_400_json_rpc(lambda_env, body):
    flagged = {**event(), "body": body, "isBase64Encoded": True}
    message = refusal(lambda_handler.handler(flagged, None), 400, -32700)
    assert message == "Parse error: the body is flagged isBase64Encoded but is not base64"


def test_a_body_flagged_base64_that_is_not_is_refused_only_after_the_checks_before_it(lambda_env):
    lambda_env.delenv("LANCELOT_ALLOW_UNAUTHENTICATED")
    lambda_env.setenv("LANCELOT_AUTH_TOKENS", TOKEN)
    flagged = {**event(), "body": "not base64!", "isBase64Encoded": True}
    assert lambda_handler.handler(flagged, None)["statusCode"] == 401  # who asks comes first, as over HTTP
    assert lambda_handler.handler({**flagged, "requestContext": {"http": {"method": "GET"}}}, None)["statusCode"] == 405
    flagged["headers"] = {**flagged["headers"], "authorization": f"Bearer {TOKEN}"}
    refusal(lambda_handler.handler(flagged, None), 400, -32700)


def test_a_body_with_a_lone_surrogate_is_a_parse_error_as_invalid_utf_8_is_over_http(lambda_env):
    refusal(lambda_handler.handler(event('{"jsonrpc": "2.0", "id": 1, "method": "ping\ud800"}'), None), 400, -32700)


@pytest.mark.parametrize("value", ["Bearer t\u00f6k\u20acn-0123456789", "Bearer \ud83d"])
def test_an_authorization_header_outside_latin_1_is_400_invalid_request(lambda_env, value):
    lambda_env.delenv("LANCELOT_ALLOW_UNAUTHENTICATED")
    lambda_env.setenv("LANCELOT_AUTH_TOKENS", TOKEN)
    response = lambda_handler.handler(event(rpc("tools/list"), headers={"authorization": value}), None)
    message = refusal(response, 400, -32600)
    assert message == "Bad request: the Authorization header must be `Bearer` and one token"
    assert 'error="invalid_request"' in response["headers"]["www-authenticate"]


def test_other_headers_outside_latin_1_get_the_answers_http_gives_their_utf_8(lambda_env):
    origin = event(rpc("tools/list"), headers={"origin": "https://\u20ac.example"})
    assert "Origin is not allowed" in refusal(lambda_handler.handler(origin, None), 403, -32600)
    version = event(rpc("tools/list"), headers={"mcp-protocol-version": "2025-11-25\u20ac"})
    refusal(lambda_handler.handler(version, None), 400, -32022)
    # A header nobody reads is opaque, as RFC 9110 asks of bytes outside ASCII: the call is served.
    note = event(rpc("tools/list"), headers={"x-note": "caf\u00e9 \u20ac \U0001f6b2 \ud83d", "\u20ac": "name"})
    assert len(answer(lambda_handler.handler(note, None))["result"]["tools"]) == 5


def hostile_events(count, seed):
    rng = random.Random(seed)
    texts = ["", "application/json", "text/plain", "\u20ac", "\ud83d", "caf\u00e9", "*/*", "2026-07-28", "x" * 3000]
    bodies = [json.dumps(rpc("tools/list")), json.dumps(rpc("ping")), "", "{", "[]", "not base64!", "e30=", "\ud800"]
    for _ in range(count):
        headers = {name: rng.choice(texts) for name in rng.sample(["content-type", "accept", "origin", "x-a"], k=2)}
        if rng.random() < 0.3:
            headers["mcp-protocol-version"] = rng.choice(texts)
        if rng.random() < 0.3:
            headers["authorization"] = "Bearer " + rng.choice(texts)
        hostile = event(method=rng.choice(["POST", "POST", "GET", "PUT"]), path=rng.choice(["/", "/\u20ac", "/mcp"]))
        hostile["headers"] = {**hostile["headers"], **headers}
        yield {**hostile, "body": rng.choice(bodies), "isBase64Encoded": rng.random() < 0.3}


def test_hundreds_of_hostile_events_are_answered_and_every_refusal_is_json_rpc(lambda_env):
    statuses = set()
    for hostile in hostile_events(300, seed=29):
        response = lambda_handler.handler(hostile, None)
        statuses.add(response["statusCode"])
        assert response["statusCode"] != 500, hostile
        if response["statusCode"] >= 400:
            assert response["headers"]["content-type"] == "application/json", hostile
            assert set(answer(response)["error"]) >= {"code", "message"}
    assert 200 in statuses and len(statuses) >= 5
