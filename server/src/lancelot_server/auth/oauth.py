"""JWT access tokens checked as an OAuth 2.1 resource server must (RFC 9068, RFC 8707, MCP authorization):
`JwtVerifier`, the `Verifier` behind `LANCELOT_OAUTH_ISSUER`.

    token ─→ header: `alg` in the asymmetric allow-list; `typ`, when present, that of an access token
          ─→ key: the issuer's JWKS by `kid` (cached; an unknown kid refetches, at most once per 6 s)
          ─→ PyJWT: signature, `exp` required, `nbf`/`iat` when present, `iss`, `aud` naming this server
          ─→ no `cnf` (a key-bound token needs a proof this server cannot check)
          ─→ scopes (`scope` string, `scp` list or string): each required one, else 403
          ─→ Principal: `jwt:<sub>` for the log, tables from `table:NAME` scopes

PyJWT does the cryptography and the claim checks; this module picks the key and the algorithm and fetches
the keys (urllib: two small GETs do not call for an HTTP client). `verify` raises only `Rejected` and waits
on a fetch at most about `timeout` seconds.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from typing import IO, Any
from urllib.parse import urlsplit

import jwt
import structlog
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

from lancelot_server.auth.callers import Principal
from lancelot_server.auth.verifier import Rejected

log = structlog.get_logger("lancelot.auth")

ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LEEWAY_S = 60.0  # clock skew forgiven on exp, nbf and iat
TIMEOUT_S = 5.0  # the most one refresh of the keys, discovery included, may take
# At most one fetch this often, whatever kids tokens name: 10 a minute (jwks-rsa's default), so a key
# rotated in soon after a fetch is accepted within seconds, while random kids cost the issuer next to nothing.
REFETCH_S = 6.0
MAX_AGE_S = 600.0  # keys are fetched again when this old (and kept if that fails)
MAX_TOKEN = 16 * 1024
MAX_DOCUMENT = 256 * 1024
MAX_KEYS = 100
MIN_RSA_BITS = 2048  # RFC 7518 §3.3
# RFC 9068 asks for at+jwt, but most issuers send JWT or nothing; other types (logout tokens, DPoP proofs)
# are other kinds of JWT that the same keys sign.
ACCESS_TOKEN_TYPES = frozenset({"jwt", "at+jwt", "application/at+jwt"})
TABLE_SCOPE = "table:"
LABEL_CHARS = 48

# PyJWT's messages can quote the token's header; these reach the client, so they are ours.
_REASONS: tuple[tuple[type[jwt.PyJWTError], str], ...] = (
    (jwt.ExpiredSignatureError, "the token has expired"),
    (jwt.ImmatureSignatureError, "the token is not valid yet (nbf or iat)"),
    (jwt.InvalidAudienceError, "the token was issued for another resource (aud)"),
    (jwt.InvalidIssuerError, "the token is from another issuer (iss)"),
    (jwt.InvalidSignatureError, "the token's signature does not verify"),
    (jwt.InvalidAlgorithmError, "the token's algorithm does not suit its key"),
    (jwt.DecodeError, "the token is malformed"),
)

Keys = dict[str | None, dict[str, jwt.PyJWK]]  # kid -> algorithm -> key


class _Unavailable(Exception):
    """The keys could not be fetched; the message says why, for the log."""


def secure_url(url: str, setting: str) -> str:
    """`url` if HTTPS, or HTTP to a loopback host; else a ValueError naming `setting`."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if (parts.scheme == "https" and host) or (parts.scheme == "http" and loopback):
        return url
    raise ValueError(f"{setting} must be an https:// URL (http:// only on 127.0.0.1, localhost or ::1); got {url!r}")


def metadata_urls(issuer: str) -> list[str]:
    """Where the issuer's metadata may be, in the order of the MCP authorization spec: RFC 8414 §3.1 (the
    well-known path inserted before the issuer's path), then OpenID Connect Discovery inserted, then appended."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def _spellings(url: str) -> tuple[str, str]:
    """`url` with and without a trailing slash: the guard serves `/mcp` and `/mcp/` alike, and issuers such as
    Auth0 end theirs in a slash that operators drop. Both spellings name the same host and path."""
    bare = url.removesuffix("/")
    return bare, bare + "/"


class _HttpsRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        try:
            secure_url(newurl, "a redirect")  # never from HTTPS down to HTTP
        except ValueError:
            fp.close()
            raise
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_opener = urllib.request.build_opener(_HttpsRedirects)


def _get_json(url: str, deadline: float) -> Any:
    body = bytearray()
    try:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no time left")
        # secure_url: https, or http on loopback, never file: and the like.
        request = urllib.request.Request(secure_url(url, "the URL"), headers={"Accept": "application/json"})  # noqa: S310
        with _opener.open(request, timeout=remaining) as r:
            # read1: one receive at a time, so a server that trickles cannot hold us past the deadline.
            while chunk := r.read1(65536):
                body += chunk
                if len(body) > MAX_DOCUMENT:
                    raise ValueError(f"larger than {MAX_DOCUMENT} bytes")
                if time.monotonic() > deadline:
                    raise TimeoutError("timed out")
    except urllib.error.HTTPError as exc:
        exc.close()
        raise _Unavailable(f"{url}: HTTP {exc.code}") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _Unavailable(f"{url}: {str(exc) or type(exc).__name__}") from None
    try:
        return json.loads(body)
    except ValueError:
        raise _Unavailable(f"{url}: not JSON") from None


def _discover(issuer: str, deadline: float) -> str:
    """The issuer's `jwks_uri`, from the first of its metadata documents that names it as issuer."""
    problems = []
    for url in metadata_urls(issuer):
        try:
            document = _get_json(url, deadline)
        except _Unavailable as exc:
            problems.append(str(exc))
            continue
        if not isinstance(document, dict) or document.get("issuer") not in _spellings(issuer):
            problems.append(f"{url}: names another issuer")  # RFC 8414 §3.3: then it must not be used
        elif not isinstance(jwks_uri := document.get("jwks_uri"), str):
            problems.append(f"{url}: no jwks_uri")
        else:
            try:
                return secure_url(jwks_uri, f"jwks_uri at {url}")
            except ValueError as exc:
                problems.append(str(exc))
    raise _Unavailable("no usable metadata: " + "; ".join(problems))


def _key(entry: dict[str, Any], alg: str) -> jwt.PyJWK | None:
    try:
        key = jwt.PyJWK(entry, algorithm=alg)
        key.Algorithm.prepare_key(key.key)  # checks the curve suits the algorithm (ES256: P-256)
    except (jwt.PyJWTError, ValueError, TypeError):
        return None
    if isinstance(key.key, RSAPublicKey) and key.key.key_size < MIN_RSA_BITS:
        return None
    return key


def _index(document: Any, algorithms: Iterable[str], url: str) -> Keys:
    """The JWKS's signing keys, each under its kid once for every allowed algorithm it can verify."""
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise _Unavailable(f"{url}: not a JWK Set")
    keys: Keys = {}
    for entry in entries[:MAX_KEYS]:
        # `d` is private key material, which a JWKS must never publish: such an entry is not trusted.
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or "d" in entry:
            continue
        kid = entry.get("kid")
        if kid is not None and not isinstance(kid, str):
            continue
        for alg in algorithms:
            if entry.get("alg", alg) == alg and (key := _key(entry, alg)) is not None:
                keys.setdefault(kid, {}).setdefault(alg, key)
    if not keys:
        raise _Unavailable(f"{url}: no usable signing keys")
    return keys


def _pick(keys: Keys, kid: str | None, alg: str) -> jwt.PyJWK | None:
    if kid is None and len(keys) == 1:  # a token without a kid is fine while the issuer has one key
        kid = next(iter(keys))
    return keys.get(kid, {}).get(alg)


class _KeyCache:
    """The issuer's signing keys: fetched on first use, again when `max_age` old or when a token names a kid
    they lack, but never more than once per `refetch` seconds, so random kids cannot make us hammer the issuer.

    One fetch at a time, in a thread of its own; no lock is held while it runs. A key already held (even one
    past `max_age`, which a fetch in the background then renews) is used at once; a token whose kid is not
    held waits on the fetch in flight, or the one it may start, for at most `timeout` seconds.
    """

    def __init__(
        self,
        issuer: str,
        jwks_url: str | None,
        algorithms: tuple[str, ...],
        timeout: float,
        refetch: float,
        max_age: float,
        clock: Callable[[], float],
    ) -> None:
        self.issuer, self.jwks_url, self.algorithms = issuer, jwks_url, algorithms
        self.timeout, self.refetch, self.max_age, self.clock = timeout, refetch, max_age, clock
        self._lock = threading.Lock()  # guards _tried and _fetch, never held during a fetch
        self._current: tuple[Keys, float] | None = None  # the keys and when they were fetched
        self._tried: float | None = None
        self._fetch: threading.Event | None = None  # set when the fetch in flight ends

    def find(self, kid: str | None, alg: str) -> jwt.PyJWK:
        current = self._current
        if current is not None and (key := _pick(current[0], kid, alg)) is not None:
            if self.clock() - current[1] >= self.max_age:
                self._start()  # served meanwhile: stale keys serve while the issuer cannot be reached
            return key
        fetch = self._start()
        if fetch is not None:
            fetch.wait(self.timeout)
        current = self._current
        if current is None:
            raise Rejected("the issuer's signing keys could not be fetched; try again later")
        key = _pick(current[0], kid, alg)
        if key is None:
            raise Rejected("no signing key of the issuer matches the token (kid, alg)")
        return key

    def held(self, kid: str | None, alg: str) -> bool:
        """Whether a key for (kid, alg) is at hand, so that `find` does not wait."""
        current = self._current
        return current is not None and _pick(current[0], kid, alg) is not None

    def settle(self) -> None:
        """Wait for the fetch in flight, if any, to end (at most `timeout` seconds)."""
        fetch = self._fetch
        if fetch is not None:
            fetch.wait(self.timeout)

    def _start(self) -> threading.Event | None:
        """The fetch in flight, or a new one when `refetch` seconds have passed since the last; else None."""
        with self._lock:
            if self._fetch is None:
                now = self.clock()
                if self._tried is not None and now - self._tried < self.refetch:
                    return None
                self._tried = now
                self._fetch = threading.Event()
                threading.Thread(target=self._refresh, args=(self._fetch,), name="jwks-fetch", daemon=True).start()
            return self._fetch

    def _refresh(self, done: threading.Event) -> None:
        deadline = time.monotonic() + self.timeout
        try:
            if self.jwks_url is None:
                self.jwks_url = _discover(self.issuer, deadline)  # once: the JWKS URL, unlike its keys, stays
            keys = _index(_get_json(self.jwks_url, deadline), self.algorithms, self.jwks_url)
        except _Unavailable as exc:
            kept = "the previous keys" if self._current else "none"
            log.warning("oauth keys unavailable", issuer=self.issuer, problem=str(exc), serving=kept)
        else:
            self._current = (keys, self.clock())
            log.info("oauth keys fetched", url=self.jwks_url, kids=sorted(str(kid) for kid in keys))
        finally:
            with self._lock:
                self._fetch = None
            done.set()


class JwtVerifier:
    """The `Verifier` for JWT access tokens from `issuer` for `audience`, this server's public MCP URL.

    `jwks_url` None: found once in the issuer's metadata. `algorithms`: asymmetric ones only. `timeout`: the
    most a refresh of the keys may take; `leeway`: the clock skew forgiven; `refetch` and `max_age`: see
    `_KeyCache`. A ValueError names the setting that is wrong.
    """

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        jwks_url: str | None = None,
        required_scopes: Iterable[str] = (),
        algorithms: Iterable[str] = ASYMMETRIC,
        timeout: float = TIMEOUT_S,
        leeway: float = LEEWAY_S,
        refetch: float = REFETCH_S,
        max_age: float = MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        secure_url(issuer, "LANCELOT_OAUTH_ISSUER")
        if urlsplit(issuer).query or urlsplit(issuer).fragment:
            raise ValueError(f"LANCELOT_OAUTH_ISSUER must not have a query or fragment (RFC 8414 §2); got {issuer!r}")
        if jwks_url is not None:
            secure_url(jwks_url, "LANCELOT_OAUTH_JWKS_URL")
        if not audience:
            raise ValueError("LANCELOT_OAUTH_RESOURCE must be this server's public MCP URL, the tokens' audience")
        self.algorithms = tuple(algorithms)
        if not self.algorithms or not set(self.algorithms) <= set(ASYMMETRIC):
            raise ValueError(f"JWT algorithms must be among {', '.join(ASYMMETRIC)}; got {', '.join(self.algorithms)}")
        self.issuers, self.audiences = _spellings(issuer), _spellings(audience)
        self.required_scopes = tuple(required_scopes)
        self.leeway = leeway
        self.keys = _KeyCache(issuer, jwks_url, self.algorithms, timeout, refetch, max_age, clock)

    def may_block(self, token: str) -> bool:
        """Whether `verify(token)` may wait on the issuer (a key fetch). When not, verifying is a little CPU,
        cheaper on the event loop than a hop to a worker thread (docs/decisions.md, "JWT access tokens")."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return False  # refused without a key
        return not self.keys.held(header.get("kid"), str(header.get("alg")))

    def verify(self, token: str) -> Principal:
        if len(token) > MAX_TOKEN:
            raise Rejected("the token is too long")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise Rejected("the token is malformed") from None
        alg, typ = header.get("alg"), header.get("typ")
        if alg not in self.algorithms:  # before any key is looked up: none, HS256 and the rest end here
            raise Rejected(f"the token's algorithm is not allowed (only {', '.join(self.algorithms)})")
        if typ is not None and (not isinstance(typ, str) or typ.lower() not in ACCESS_TOKEN_TYPES):
            raise Rejected("the token is not an access token (typ)")
        key = self.keys.find(header.get("kid"), alg)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=self.algorithms,
                audience=self.audiences,
                issuer=self.issuers,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.MissingRequiredClaimError as exc:
            raise Rejected(f"the token has no {exc.claim} claim") from None
        except jwt.PyJWTError as exc:
            raise Rejected(
                next((why for kind, why in _REASONS if isinstance(exc, kind)), "the token is invalid")
            ) from None
        if "cnf" in claims:
            raise Rejected("the token is bound to a key (cnf), which a bearer token must not be")
        scopes = _scopes(claims)
        missing = [scope for scope in self.required_scopes if scope not in scopes]
        if missing:
            # RFC 6750 §3.1: the challenge names every scope the request needs, not only the missing ones.
            needed = " ".join(self.required_scopes)
            raise Rejected(
                f"the token lacks the scope {' '.join(missing)}", status=403, error="insufficient_scope", scope=needed
            )
        tables = frozenset(scope.removeprefix(TABLE_SCOPE) for scope in scopes if scope.startswith(TABLE_SCOPE))
        return Principal(_label(claims), tables or None, scopes)


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    """RFC 9068's `scope` (space-separated) and `scp` (a list, or a string as Entra ID sends it)."""
    scopes: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            scopes |= set(value.split())
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            scopes |= set(value)
        elif value is not None:
            raise Rejected(f"the token's {name} claim is neither a string nor a list of strings")
    return frozenset(scopes)


def _label(claims: dict[str, Any]) -> str:
    who = next((v for v in map(claims.get, ("sub", "client_id", "azp")) if isinstance(v, str) and v), "unknown")
    return "jwt:" + "".join(c if c.isprintable() else "?" for c in who[:LABEL_CHARS])
