"""JwtVerifier against a real issuer on 127.0.0.1: its metadata and JWKS served over HTTP by the test."""

import base64
import hashlib
import hmac
import json
import threading
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from structlog.testing import capture_logs
from tests.support.issuer import RESOURCE, Issuer, public_jwk, rsa_key

from lancelot_server.auth.oauth import REFETCH_S, JwtVerifier, metadata_urls
from lancelot_server.auth.verifier import Rejected


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Clock:
    """The key cache's clock, moved by the test."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def issuer():
    server = Issuer()
    yield server
    server.close()


@pytest.fixture
def clock():
    return Clock()


def verifier(issuer, clock=None, discover=False, **options):
    jwks_url = None if discover else issuer.jwks_url
    return JwtVerifier(issuer.url, RESOURCE, jwks_url=jwks_url, clock=clock or time.monotonic, **options)


def rejected(verify, token):
    with pytest.raises(Rejected) as info:
        verify.verify(token)
    return info.value


@pytest.mark.parametrize("alg", ["RS256", "PS256", "RS512"])
def test_a_good_rsa_token_gives_its_principal(issuer, alg):
    principal = verifier(issuer).verify(issuer.token(alg=alg, scope="search read"))
    assert principal.label == "jwt:alice"
    assert principal.scopes == {"search", "read"}
    assert principal.tables is None


@pytest.mark.parametrize(("curve", "alg"), [(ec.SECP256R1(), "ES256"), (ec.SECP384R1(), "ES384")])
def test_a_good_ec_token_passes(issuer, curve, alg):
    issuer.keys = {"ec": ec.generate_private_key(curve)}
    assert verifier(issuer).verify(issuer.token(kid="ec", alg=alg)).label == "jwt:alice"


def test_the_label_is_the_subject_or_client_truncated_and_never_the_token(issuer):
    verify = verifier(issuer)
    assert verify.verify(issuer.token(sub=None, client_id="ci-bot")).label == "jwt:ci-bot"
    token = issuer.token(sub="x" * 500)
    label = verify.verify(token).label
    assert label.startswith("jwt:xxx") and len(label) < 60 and token not in label


def test_an_expired_token_is_rejected(issuer):
    verify = verifier(issuer)
    assert rejected(verify, issuer.token(exp=int(time.time()) - 120)).reason == "the token has expired"
    assert rejected(verify, issuer.token(exp=int(time.time()) - 120)).status == 401


def test_a_minute_of_clock_skew_is_forgiven(issuer):
    verify = verifier(issuer)
    now = int(time.time())
    verify.verify(issuer.token(exp=now - 20, iat=now + 20, nbf=now + 20))


@pytest.mark.parametrize("claim", ["nbf", "iat"])
def test_a_token_not_yet_valid_is_rejected(issuer, claim):
    token = issuer.token(**{claim: int(time.time()) + 600})
    assert "not valid yet" in rejected(verifier(issuer), token).reason


def test_a_token_without_exp_is_rejected(issuer):
    assert rejected(verifier(issuer), issuer.token(exp=None)).reason == "the token has no exp claim"


def test_a_token_for_another_resource_is_rejected(issuer):
    verify = verifier(issuer)
    assert "another resource" in rejected(verify, issuer.token(aud="https://other.example.com/mcp")).reason
    assert "another resource" in rejected(verify, issuer.token(aud=[RESOURCE + "/extra"])).reason
    assert rejected(verify, issuer.token(aud=None)).reason == "the token has no aud claim"


def test_an_audience_list_containing_ours_passes_and_a_trailing_slash_is_the_same_resource(issuer):
    verify = verifier(issuer)
    verify.verify(issuer.token(aud=["https://other.example.com", RESOURCE]))
    verify.verify(issuer.token(aud=RESOURCE + "/"))


def test_a_token_from_another_issuer_is_rejected(issuer):
    verify = verifier(issuer)
    assert "another issuer" in rejected(verify, issuer.token(iss="https://evil.example.com")).reason
    assert "another issuer" in rejected(verify, issuer.token(iss=issuer.url + "/tenant")).reason
    assert rejected(verify, issuer.token(iss=None)).reason == "the token has no iss claim"
    verify.verify(issuer.token(iss=issuer.url + "/"))  # the same issuer, as Auth0 spells it


def test_an_unknown_kid_refetches_once_and_a_rotated_key_passes_without_restart(issuer, clock):
    verify = verifier(issuer, clock)
    verify.verify(issuer.token())
    assert issuer.hits["/jwks"] == 1
    clock.now += REFETCH_S
    issuer.rotate("k2", rsa_key(2))
    principal = verify.verify(issuer.token(kid="k2"))
    assert principal.label == "jwt:alice"
    assert issuer.hits["/jwks"] == 2
    # The old key is gone from the issuer, and so from us.
    assert "no signing key" in rejected(verify, issuer.token(kid="k1", private=rsa_key(1))).reason
    verify.verify(issuer.token(kid="k2"))
    assert issuer.hits["/jwks"] == 2


def test_a_burst_of_unknown_kids_fetches_at_most_once_per_interval(issuer, clock):
    verify = verifier(issuer, clock)
    verify.verify(issuer.token())
    clock.now += REFETCH_S
    for n in range(50):
        rejected(verify, issuer.token(kid=f"random-{n}", private=rsa_key(1)))
        clock.now += 0.1
    assert issuer.hits["/jwks"] == 2
    clock.now += REFETCH_S
    for n in range(10):
        rejected(verify, issuer.token(kid=f"random-{n}", private=rsa_key(1)))
    assert issuer.hits["/jwks"] == 3


def test_keys_past_their_max_age_serve_at_once_while_a_fetch_renews_them(issuer, clock):
    verify = verifier(issuer, clock, max_age=600)
    token = issuer.token()
    verify.verify(token)
    clock.now += 599
    verify.verify(token)
    assert issuer.hits["/jwks"] == 1
    issuer.rotate("k2", rsa_key(2))
    clock.now += 1
    verify.verify(token)  # k1 is held: it verifies without waiting, and a fetch starts
    verify.keys.settle()
    assert issuer.hits["/jwks"] == 2
    assert "no signing key" in rejected(verify, token).reason  # the issuer dropped k1, and so did we
    verify.verify(issuer.token(kid="k2"))
    issuer.fault = (503, b"down")
    clock.now += 600
    with capture_logs() as logs:
        verify.verify(issuer.token(kid="k2"))  # the keys it had still verify
        verify.keys.settle()
    assert issuer.hits["/jwks"] == 3
    assert logs[0]["log_level"] == "warning" and logs[0]["serving"] == "the previous keys"


def test_alg_none_is_rejected_before_any_key_is_fetched(issuer):
    token = jwt.encode({"iss": issuer.url, "aud": RESOURCE, "exp": int(time.time()) + 60}, None, algorithm="none")
    assert "algorithm is not allowed" in rejected(verifier(issuer), token).reason
    assert issuer.hits["/jwks"] == 0


def _hs256(issuer, secret):
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
    payload = b64(json.dumps({"iss": issuer.url, "aud": RESOURCE, "exp": int(time.time()) + 60}).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"


def test_hs256_signed_with_the_public_key_is_rejected(issuer):
    pem = (
        rsa_key(1)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    jwk_text = json.dumps(public_jwk("k1", rsa_key(1))).encode()
    verify = verifier(issuer)
    for secret in (pem, jwk_text):
        assert "algorithm is not allowed" in rejected(verify, _hs256(issuer, secret)).reason


def test_a_key_only_verifies_with_an_algorithm_it_suits(issuer):
    # An RSA key named by an EC algorithm, and a JWK pinned to RS256 asked for PS256.
    issuer.extra_jwks = [public_jwk("pinned", rsa_key(2), alg="RS256")]
    verify = verifier(issuer)
    forged = issuer.token().split(".")
    header = b64(json.dumps({"alg": "ES256", "kid": "k1"}).encode())
    assert "no signing key" in rejected(verify, ".".join([header, *forged[1:]])).reason
    assert "no signing key" in rejected(verify, issuer.token(kid="pinned", alg="PS256", private=rsa_key(2))).reason
    verify.verify(issuer.token(kid="pinned", alg="RS256", private=rsa_key(2)))


def test_a_token_without_kid_passes_while_the_issuer_has_one_key(issuer):
    token = jwt.encode({"iss": issuer.url, "aud": RESOURCE, "exp": int(time.time()) + 60}, rsa_key(1), "RS256")
    verifier(issuer).verify(token)
    issuer.keys["k2"] = rsa_key(2)
    assert "no signing key" in rejected(verifier(issuer), token).reason


def test_a_tampered_payload_is_rejected(issuer):
    header, _, signature = issuer.token(scope="search").split(".")
    now = int(time.time())
    claims = {"iss": issuer.url, "aud": RESOURCE, "sub": "mallory", "exp": now + 300, "scope": "search table:secret"}
    tampered = f"{header}.{b64(json.dumps(claims).encode())}.{signature}"
    assert rejected(verifier(issuer), tampered).reason == "the token's signature does not verify"


def test_a_signature_by_a_key_the_issuer_does_not_publish_is_rejected(issuer):
    token = issuer.token(private=rsa_key(3))  # kid k1, signed by someone else's key
    assert rejected(verifier(issuer), token).reason == "the token's signature does not verify"


@pytest.mark.parametrize("token", ["", "not-a-jwt", "a.b.c", "e30.e30.", "x" * 20000])
def test_malformed_tokens_are_rejected(issuer, token):
    assert rejected(verifier(issuer), token).status == 401


@pytest.mark.parametrize("typ", ["logout+jwt", "dpop+jwt"])
def test_other_kinds_of_jwt_are_rejected(issuer, typ):
    assert "not an access token" in rejected(verifier(issuer), issuer.token(header={"typ": typ})).reason


def test_at_jwt_typ_passes(issuer):
    verifier(issuer).verify(issuer.token(header={"typ": "at+jwt"}))


def test_a_key_bound_token_is_rejected(issuer):
    token = issuer.token(cnf={"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"})
    assert "bound to a key" in rejected(verifier(issuer), token).reason


def test_missing_or_insufficient_scopes_are_403_naming_the_scopes_needed(issuer):
    verify = verifier(issuer, required_scopes=("search", "read"))
    for token in (issuer.token(), issuer.token(scope="search"), issuer.token(scope="write")):
        refusal = rejected(verify, token)
        assert (refusal.status, refusal.error, refusal.scope) == (403, "insufficient_scope", "search read")
    assert "lacks the scope read" in rejected(verify, issuer.token(scope="search")).reason
    assert verify.verify(issuer.token(scope="read search extra")).scopes == {"read", "search", "extra"}


def test_scp_as_a_list_or_a_string_counts_as_scopes(issuer):
    verify = verifier(issuer, required_scopes=("search",))
    assert verify.verify(issuer.token(scp=["search", "read"])).scopes == {"search", "read"}
    assert verify.verify(issuer.token(scp="search read")).scopes == {"search", "read"}  # as Entra ID sends it
    assert verify.verify(issuer.token(scope="search", scp=["read"])).scopes == {"search", "read"}
    assert rejected(verify, issuer.token(scp=[1, 2])).status == 401


def test_table_scopes_limit_the_tables(issuer):
    verify = verifier(issuer)
    principal = verify.verify(issuer.token(scope="search table:docs table:handbook"))
    assert principal.tables == {"docs", "handbook"}
    assert verify.verify(issuer.token(scp=["table:docs"])).tables == {"docs"}
    assert verify.verify(issuer.token(scope="search")).tables is None


def test_metadata_urls_follow_rfc_8414_then_openid():
    assert metadata_urls("https://auth.example.com/") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://auth.example.com/tenant/1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant/1",
        "https://auth.example.com/.well-known/openid-configuration/tenant/1",
        "https://auth.example.com/tenant/1/.well-known/openid-configuration",
    ]


def test_the_jwks_is_discovered_once_via_rfc_8414_with_the_path_inserted(clock):
    issuer = Issuer(path="/tenant")
    try:
        issuer.metadata("/.well-known/oauth-authorization-server/tenant")
        verify = verifier(issuer, clock, discover=True)
        verify.verify(issuer.token())
        clock.now += REFETCH_S
        issuer.rotate("k2", rsa_key(2))
        verify.verify(issuer.token(kid="k2"))
        assert issuer.hits == {"/.well-known/oauth-authorization-server/tenant": 1, "/jwks": 2}
    finally:
        issuer.close()


def test_the_jwks_is_discovered_via_openid_configuration(issuer):
    issuer.metadata("/.well-known/openid-configuration")
    verifier(issuer, discover=True).verify(issuer.token())
    assert issuer.hits == {
        "/.well-known/oauth-authorization-server": 1,
        "/.well-known/openid-configuration": 1,
        "/jwks": 1,
    }


def test_metadata_naming_another_issuer_or_an_insecure_jwks_is_not_used(issuer):
    issuer.documents["/.well-known/oauth-authorization-server"] = {
        "issuer": "https://evil.example.com",
        "jwks_uri": issuer.jwks_url,
    }
    issuer.metadata("/.well-known/openid-configuration", jwks_uri="http://keys.example.com/jwks")
    with capture_logs() as logs:
        assert "could not be fetched" in rejected(verifier(issuer, discover=True), issuer.token()).reason
    assert "names another issuer" in logs[0]["problem"] and "https://" in logs[0]["problem"]
    assert issuer.hits["/jwks"] == 0


@pytest.mark.parametrize(
    "fault",
    [
        (503, b"unavailable"),
        (200, b"<html>not json</html>"),
        (200, b'{"no": "keys"}'),
        (200, json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "k1"}]}).encode()),
        (200, json.dumps({"keys": [public_jwk("k1", rsa_key(1), use="enc")]}).encode()),
    ],
)
def test_a_jwks_that_fails_is_a_rejection_and_a_warning(issuer, fault):
    issuer.fault = fault
    with capture_logs() as logs:
        refusal = rejected(verifier(issuer), issuer.token())
    assert refusal.status == 401 and "could not be fetched" in refusal.reason
    assert [log["log_level"] for log in logs] == ["warning"]


def test_an_unreachable_issuer_is_a_rejection(issuer):
    verify = verifier(issuer)
    token = issuer.token()
    issuer.close()
    with capture_logs() as logs:
        assert "could not be fetched" in rejected(verify, token).reason
    assert "Connection refused" in logs[0]["problem"]


def test_a_redirect_is_followed_only_to_a_secure_url(issuer):
    issuer.redirects = {"/moved": issuer.jwks_url, "/downgraded": "http://keys.example.com/jwks"}
    token = issuer.token()
    JwtVerifier(issuer.url, RESOURCE, jwks_url=issuer.origin + "/moved").verify(token)
    with capture_logs() as logs:
        rejected(JwtVerifier(issuer.url, RESOURCE, jwks_url=issuer.origin + "/downgraded"), token)
    assert "a redirect must be an https:// URL" in logs[0]["problem"]


@pytest.mark.xdist_group("timing")  # a time budget
def test_a_hanging_issuer_is_a_rejection_within_the_timeout(issuer):
    issuer.fault = "hang"
    verify = verifier(issuer, timeout=0.5)
    started = time.monotonic()
    rejected(verify, issuer.token())
    assert time.monotonic() - started < 2


def test_a_failed_fetch_is_retried_after_the_interval_not_before(issuer, clock):
    issuer.fault = (503, b"down")
    verify = verifier(issuer, clock)
    token = issuer.token()
    with capture_logs():
        rejected(verify, token)
        rejected(verify, token)
    assert issuer.hits["/jwks"] == 1
    issuer.fault = None
    clock.now += REFETCH_S
    verify.verify(token)
    assert issuer.hits["/jwks"] == 2


def test_threads_verifying_at_once_share_one_fetch(issuer):
    issuer.delay = 0.3  # long enough for every thread to arrive while the first fetch is under way
    verify = verifier(issuer)
    token = issuer.token(scope="table:docs")
    results = []
    start = threading.Barrier(8)

    def check():
        start.wait()
        results.append(verify.verify(token).tables)

    threads = [threading.Thread(target=check) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [{"docs"}] * 8
    assert issuer.hits["/jwks"] == 1


def test_a_held_key_even_past_its_max_age_verifies_at_once_while_unknown_kids_wait_on_one_fetch(issuer, clock):
    verify = verifier(issuer, clock, timeout=3, max_age=600)
    token = issuer.token()
    verify.verify(token)
    issuer.fault = "hang"
    clock.now += 600  # the held keys are due for renewal too
    strangers = [issuer.token(kid=f"random-{n}", private=rsa_key(7)) for n in range(20)]
    reasons = []
    threads = [threading.Thread(target=lambda t=t: reasons.append(rejected(verify, t).reason)) for t in strangers]
    for thread in threads:
        thread.start()
    while issuer.hits["/jwks"] < 2:
        time.sleep(0.01)
    started = time.monotonic()
    assert verify.verify(token).label == "jwt:alice"
    assert time.monotonic() - started < 1  # the fetch hangs for 3 s
    for thread in threads:
        thread.join()
    assert len(reasons) == 20 and all("no signing key" in reason for reason in reasons)
    assert issuer.hits["/jwks"] == 2  # twenty unknown kids shared one fetch


@pytest.mark.parametrize(
    ("issuer_url", "jwks_url", "setting"),
    [
        ("http://auth.example.com", None, "LANCELOT_OAUTH_ISSUER"),
        ("ftp://auth.example.com", None, "LANCELOT_OAUTH_ISSUER"),
        ("https://auth.example.com?tenant=1", None, "LANCELOT_OAUTH_ISSUER"),
        ("https://auth.example.com", "http://auth.example.com/jwks", "LANCELOT_OAUTH_JWKS_URL"),
        ("https://auth.example.com", "file:///etc/jwks.json", "LANCELOT_OAUTH_JWKS_URL"),
    ],
)
def test_insecure_urls_are_refused_at_construction(issuer_url, jwks_url, setting):
    with pytest.raises(ValueError, match=setting):
        JwtVerifier(issuer_url, RESOURCE, jwks_url=jwks_url)


@pytest.mark.parametrize(
    "url", ["https://auth.example.com", "http://127.0.0.1:8080", "http://localhost", "http://[::1]:9"]
)
def test_https_and_loopback_urls_are_accepted_without_fetching(url):
    JwtVerifier(url, RESOURCE, jwks_url=url + "/jwks")


@pytest.mark.parametrize("algorithms", [("HS256",), ("none",), ("RS256", "HS256"), ()])
def test_symmetric_or_no_algorithms_are_refused_at_construction(algorithms):
    with pytest.raises(ValueError, match="algorithms"):
        JwtVerifier("https://auth.example.com", RESOURCE, algorithms=algorithms)


def test_verifying_may_block_only_until_the_tokens_key_is_held(issuer):
    verify = verifier(issuer)
    token = issuer.token()
    assert verify.may_block(token)  # nothing fetched yet
    verify.verify(token)
    assert not verify.may_block(token)
    assert verify.may_block(issuer.token(kid="k9", private=rsa_key(9)))  # an unknown kid would refetch
    assert not verify.may_block("not.a.jwt")  # refused without any key
