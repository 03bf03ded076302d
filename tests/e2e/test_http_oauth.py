"""`lancelot --http` as an OAuth 2.1 resource server, a real process on 127.0.0.1, with JWTs signed by a
real issuer the test serves on 127.0.0.1 (its JWKS): metadata, challenges, the SDK client with a token,
and every way a token can be wrong, over real HTTP."""

import base64
import json
import time
from concurrent.futures import ThreadPoolExecutor

import anyio
import httpx
import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import ProtectedResourceMetadata
from tests.e2e.test_http_server import Running, environment, post, rpc
from tests.support.issuer import RESOURCE, Issuer, rsa_key

from lancelot_server.auth.oauth import REFETCH_S, TIMEOUT_S

# One worker runs this module when the suite runs on several: the module's server and issuer, made once.
pytestmark = pytest.mark.xdist_group("oauth_server")

LIST = rpc("tools/list")
STATIC = "static-ci-token-0123456789"


@pytest.fixture(scope="module")
def issuer():
    server = Issuer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, lancelot_db, issuer):
    env = environment(
        lancelot_db,
        LANCELOT_OAUTH_ISSUER=issuer.url,
        LANCELOT_OAUTH_RESOURCE=RESOURCE,
        LANCELOT_OAUTH_JWKS_URL=issuer.jwks_url,
        LANCELOT_OAUTH_SCOPES="mcp:read",
        LANCELOT_AUTH_TOKENS=STATIC,
        LANCELOT_TABLES="plain",
    )
    running = Running(tmp_path_factory.mktemp("oauth"), env)
    yield running
    assert running.stop() == 0


def bearer(token):
    return {"authorization": f"Bearer {token}"}


def good(issuer, **claims):
    return issuer.token(scope="mcp:read", **claims)


def test_protected_resource_metadata_is_published_with_rfc_9728_fields(server, issuer):
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        answer = httpx.get(f"http://127.0.0.1:{server.port}{path}", timeout=30)
        assert answer.status_code == 200
        document = ProtectedResourceMetadata.model_validate_json(answer.content)
        assert str(document.resource) == RESOURCE
        assert [str(url).rstrip("/") for url in document.authorization_servers] == [issuer.url]
        assert document.scopes_supported == ["mcp:read"]


def test_no_token_gets_401_pointing_at_the_metadata(server):
    answer = post(server, LIST)
    assert answer.status_code == 401
    challenge = answer.headers["www-authenticate"]
    assert 'resource_metadata="https://search.example.com/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="mcp:read"' in challenge and "error=" not in challenge


async def search_with(url, token):
    http = httpx2.AsyncClient(headers=bearer(token), timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        return await client.call_tool("lancedb_search", {"query": "puncture patch", "mode": "text"})


def test_the_sdk_client_with_a_good_jwt_searches_and_the_log_names_the_subject(server, issuer):
    result = anyio.run(search_with, server.url, good(issuer, sub="ci-runner"))
    assert not result.is_error and result.structured_content["count"] > 0
    callers = {line.get("caller") for line in server.log() if line.get("status") == 200}
    assert "jwt:ci-runner" in callers


def test_a_static_token_works_beside_oauth(server):
    assert post(server, LIST, bearer(STATIC)).status_code == 200


def _tampered(token):
    """The token with its subject changed and the issuer's signature kept."""
    head, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["sub"] = "mallory"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{signature}"


def _unsigned(issuer):
    claims = {"iss": issuer.url, "aud": RESOURCE, "exp": int(time.time()) + 300, "scope": "mcp:read"}
    return jwt.encode(claims, None, algorithm="none")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda issuer: good(issuer, exp=int(time.time()) - 600), id="expired"),
        pytest.param(lambda issuer: good(issuer, aud="https://other.example/mcp"), id="wrong audience"),
        pytest.param(lambda issuer: good(issuer, iss="https://evil.example"), id="wrong issuer"),
        pytest.param(lambda issuer: good(issuer, kid="unknown", private=rsa_key(7)), id="unknown key"),
        pytest.param(lambda issuer: _tampered(good(issuer)), id="tampered signature"),
        pytest.param(_unsigned, id="alg none"),
    ],
)
def test_a_bad_jwt_is_401_invalid_token_and_nothing_runs(server, issuer, make):
    answer = post(server, LIST, bearer(make(issuer)))
    assert answer.status_code == 401
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert answer.json()["error"]["code"] == -32600


def test_a_good_jwt_without_the_required_scope_is_403_naming_it(server, issuer):
    answer = post(server, LIST, bearer(issuer.token(scope="other")))
    assert answer.status_code == 403
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp:read"' in challenge


def test_a_rotated_signing_key_is_accepted_without_a_restart(tmp_path, lancelot_db):
    # A server of its own: unknown keys above may have used the shared one's refetch.
    issuer = Issuer()
    env = environment(lancelot_db, LANCELOT_OAUTH_ISSUER=issuer.url, LANCELOT_OAUTH_RESOURCE=RESOURCE)
    issuer.metadata("/.well-known/oauth-authorization-server")  # the JWKS found by RFC 8414 discovery
    try:
        with Running(tmp_path, env) as running:
            assert post(running, LIST, bearer(issuer.token())).status_code == 200
            issuer.rotate("k2", rsa_key(2))
            time.sleep(REFETCH_S)  # keys were fetched for the first token: an unknown kid may refetch after this
            assert post(running, LIST, bearer(issuer.token(kid="k2"))).status_code == 200
            assert post(running, LIST, bearer(issuer.token(kid="k1", private=rsa_key(1)))).status_code == 401
    finally:
        issuer.close()


def test_table_scopes_in_a_jwt_hide_every_other_table_as_missing(server, issuer):
    token = bearer(issuer.token(scope="mcp:read table:plain"))
    call = rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": "puncture", "mode": "text"}})
    default = post(server, call, token).json()["result"]
    assert default["isError"] is False and {hit["table"] for hit in default["structuredContent"]["hits"]} == {"plain"}
    call["params"]["arguments"]["table"] = "documents"
    refused = post(server, call, token).json()["result"]
    assert refused["isError"] is True
    assert "Table 'documents' is not in the database" in refused["content"][0]["text"]
    assert ", which holds 'plain'. " in refused["content"][0]["text"]
    status = post(server, rpc("tools/call", {"name": "lancedb_status", "arguments": {}}), token).json()["result"]
    assert status["structuredContent"]["database"]["tables"] == ["plain"]


def test_a_flood_of_unknown_kids_while_the_issuer_hangs_never_delays_a_held_key(tmp_path, lancelot_db):
    # A server of its own: the flood uses its refetch, and the issuer is made to hang.
    issuer = Issuer()
    env = environment(lancelot_db, LANCELOT_OAUTH_ISSUER=issuer.url, LANCELOT_OAUTH_RESOURCE=RESOURCE)
    env["LANCELOT_OAUTH_JWKS_URL"] = issuer.jwks_url
    search = rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": "puncture", "mode": "text"}})
    valid = bearer(issuer.token())
    try:
        with Running(tmp_path, env) as running:
            assert post(running, search, valid).status_code == 200  # the keys are held, Lance is loaded
            issuer.fault = "hang"
            time.sleep(REFETCH_S)  # an unknown kid may now refetch: the fetch hangs until its timeout
            strangers = [bearer(issuer.token(kid=f"random-{n}", private=rsa_key(7))) for n in range(60)]
            client = httpx.Client(limits=httpx.Limits(max_connections=len(strangers)), timeout=30)
            with client, ThreadPoolExecutor(len(strangers)) as pool:
                flood = [pool.submit(client.post, running.url, json=search, headers=h) for h in strangers]
                deadline = time.monotonic() + 10
                while issuer.hits["/jwks"] < 2:  # the flood's one fetch has reached the hanging issuer
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
                time.sleep(0.5)  # the rest of the flood arrives and waits on that fetch
                started = time.monotonic()
                answer = post(running, search, valid)
                took = time.monotonic() - started
                statuses = {future.result().status_code for future in flood}
            assert answer.status_code == 200 and answer.json()["result"]["isError"] is False
            assert took < TIMEOUT_S / 2, f"a valid token waited {took:.1f} s behind the hanging fetch"
            assert statuses == {401}
            assert issuer.hits["/jwks"] == 2  # sixty unknown kids, one fetch
    finally:
        issuer.close()
