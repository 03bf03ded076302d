"""The auth layer inside the guard, at the ASGI level: challenges, the caller handed to the tools, the
published metadata, and settings that cannot work. Real HTTP and real JWTs: tests/e2e/test_http_auth.py."""

import json

import anyio
import pytest
from mcp.shared.auth import ProtectedResourceMetadata

from lancelot_schema.settings import resolve
from lancelot_server.auth import callers
from lancelot_server.auth.bearer import AuthConfigError, Authenticator, Oauth, from_settings
from lancelot_server.auth.tokens import StaticTokens
from lancelot_server.http.guard import Guard, Rules, loopback_hosts

TOKEN = "a-long-enough-token-0001"
RULES = Rules(
    path="/mcp",
    allowed_hosts=loopback_hosts(3000),
    allowed_origins=frozenset({"https://app.example"}),
    protocol_versions=frozenset({"2025-11-25"}),
)
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
OAUTH = Oauth("https://search.example/mcp", "https://id.example/realm", ("mcp:read",))


class Seen:
    """The app behind the guard: records the caller each request carried, answers 200."""

    def __init__(self):
        self.callers = []

    async def __call__(self, scope, receive, send):
        await receive()
        self.callers.append(callers.current.get())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def call(authenticator, headers=None, method="POST", path="/mcp"):
    headers = {
        "host": "127.0.0.1:3000",
        "content-type": "application/json",
        "accept": "application/json",
        **(headers or {}),
    }
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }
    app, sent = Seen(), []

    async def receive():
        return {"type": "http.request", "body": BODY, "more_body": False}

    async def send(message):
        sent.append(message)

    anyio.run(Guard(app, RULES, authenticator), scope, receive, send)
    head = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    return sent[0]["status"], head, b"".join(m.get("body", b"") for m in sent[1:]), app


def tokens_only():
    return Authenticator(static=StaticTokens([TOKEN]))


def test_a_valid_token_reaches_the_app_with_its_caller_set_only_for_that_request():
    status, _, _, app = call(tokens_only(), {"authorization": f"Bearer {TOKEN}"})
    assert status == 200
    assert app.callers == [callers.Principal(label="env-1")]
    assert callers.current.get() is None


def test_no_token_is_401_with_a_bare_challenge_and_a_json_rpc_body():
    status, head, body, app = call(tokens_only())
    assert status == 401 and not app.callers
    assert head["www-authenticate"] == 'Bearer realm="lancelot"'
    error = json.loads(body)["error"]
    assert error["code"] == -32600 and "Authorization: Bearer" in error["message"]


@pytest.mark.parametrize("value", ["Basic dXNlcjpwYXNz", "Token abc", "bearer", f"Bearer{TOKEN}"])
def test_another_scheme_or_a_bare_bearer_is_401_without_an_error_code(value):
    status, head, _, _ = call(tokens_only(), {"authorization": value})
    assert (status, head["www-authenticate"]) == (401, 'Bearer realm="lancelot"')


@pytest.mark.parametrize("value", [f"Bearer {TOKEN} extra", f"Bearer {TOKEN}\x7f", "Bearer a,b"])
def test_a_malformed_bearer_header_is_400_invalid_request(value):
    status, head, _, app = call(tokens_only(), {"authorization": value})
    assert status == 400 and not app.callers
    assert 'error="invalid_request"' in head["www-authenticate"]


def test_a_wrong_token_is_401_invalid_token_and_the_scheme_is_case_insensitive():
    status, head, body, _ = call(tokens_only(), {"authorization": "Bearer wrong-token-wrong-token"})
    assert status == 401
    assert 'error="invalid_token"' in head["www-authenticate"]
    assert "wrong-token" not in body.decode() + head["www-authenticate"]
    assert call(tokens_only(), {"authorization": f"bEaReR   {TOKEN}"})[0] == 200


def test_static_tokens_publish_no_oauth_metadata():
    assert call(tokens_only(), method="GET", path="/.well-known/oauth-protected-resource/mcp")[0] == 404
    assert call(tokens_only(), method="GET", path="/.well-known/oauth-protected-resource")[0] == 404


def test_a_cors_preflight_needs_no_token_and_may_send_authorization():
    headers = {"origin": "https://app.example", "access-control-request-headers": "authorization, content-type"}
    status, head, _, _ = call(tokens_only(), headers, method="OPTIONS")
    assert status == 204 and "authorization" in head["access-control-allow-headers"]
    status, head, _, _ = call(tokens_only(), {"origin": "https://app.example"})
    assert status == 401 and "www-authenticate" in head["access-control-expose-headers"]


def test_oauth_publishes_rfc_9728_metadata_where_the_challenge_points():
    authenticator = Authenticator(static=StaticTokens([TOKEN]), oauth=OAUTH)
    status, head, _, _ = call(authenticator)
    assert status == 401
    challenge = head["www-authenticate"]
    url = "https://search.example/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{url}"' in challenge and 'scope="mcp:read"' in challenge
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        status, head, body, _ = call(authenticator, method="GET", path=path)
        assert (status, head["content-type"]) == (200, "application/json")
        document = ProtectedResourceMetadata.model_validate_json(body)  # the SDK's RFC 9728 model
        assert str(document.resource) == "https://search.example/mcp"
        assert [str(s) for s in document.authorization_servers] == ["https://id.example/realm"]
        assert document.scopes_supported == ["mcp:read"] and document.bearer_methods_supported == ["header"]
    assert call(authenticator, method="POST", path="/.well-known/oauth-protected-resource")[0] == 405


def test_a_token_that_is_not_a_jwt_never_reaches_the_jwt_verifier():
    class Refuses:
        calls = 0

        def may_block(self, token):
            return True

        def verify(self, token):
            Refuses.calls += 1
            raise AssertionError("not a JWT: must not be verified as one")

    authenticator = Authenticator(jwt=Refuses(), oauth=OAUTH)
    assert call(authenticator, {"authorization": "Bearer not-a-jwt-at-all"})[0] == 401
    assert Refuses.calls == 0


def test_no_auth_settings_mean_no_authenticator():
    assert from_settings(resolve({})) is None


@pytest.mark.parametrize(
    ("environ", "problem"),
    [
        ({"LANCELOT_AUTH_TOKENS": "short"}, "shorter than 16"),
        (
            {"LANCELOT_OAUTH_RESOURCE": "https://s.example/mcp", "LANCELOT_AUTH_TOKENS": TOKEN},
            "need LANCELOT_OAUTH_ISSUER",
        ),
        ({"LANCELOT_OAUTH_ISSUER": "https://id.example"}, "needs LANCELOT_OAUTH_RESOURCE"),
        (
            {"LANCELOT_OAUTH_ISSUER": "https://id.example", "LANCELOT_OAUTH_RESOURCE": "http://s.example/mcp"},
            "LANCELOT_OAUTH_RESOURCE must be an https:// URL",
        ),
        ({"LANCELOT_AUTH_TOKENS_FILE": "/nonexistent/tokens"}, "cannot be read"),
    ],
)
def test_settings_that_cannot_work_are_one_clear_error(environ, problem):
    with pytest.raises(AuthConfigError, match=problem):
        from_settings(resolve(environ))


def test_a_jwt_whose_key_is_held_is_verified_on_the_loop_and_one_that_may_fetch_in_a_thread():
    import threading

    class Verifier:
        def __init__(self, blocking):
            self.blocking, self.threads = blocking, []

        def may_block(self, token):
            return self.blocking

        def verify(self, token):
            self.threads.append(threading.get_ident())
            return callers.Principal(label="jwt:t")

    jwt_like = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0In0.c2ln"
    for blocking, on_loop in ((False, True), (True, False)):
        verifier = Verifier(blocking)
        assert call(Authenticator(jwt=verifier, oauth=OAUTH), {"authorization": f"Bearer {jwt_like}"})[0] == 200
        assert (verifier.threads == [threading.get_ident()]) is on_loop
