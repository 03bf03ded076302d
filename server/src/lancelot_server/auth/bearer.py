"""Who may call an HTTP or Lambda server: bearer tokens checked in the guard, before a body is read.

    Authorization: Bearer TOKEN ─→ static tokens (tokens.py) ─→ else a JWT (oauth.py; one whose key is not
                                 │                                 held waits in a thread of KEY_WAITS)
                                 └→ Principal: set in `callers.current` for the tools; its label in the log

Two modes, alone or together: static tokens (`LANCELOT_AUTH_TOKENS`, `LANCELOT_AUTH_TOKENS_FILE`), and an
OAuth 2.1 resource server (`LANCELOT_OAUTH_ISSUER` + `LANCELOT_OAUTH_RESOURCE`), which alone publishes
Protected Resource Metadata (RFC 9728): with static tokens only, a metadata document would send clients
into an OAuth flow this server cannot complete. Answers follow RFC 6750 §3: no credentials → 401 with a
bare challenge; a token that does not pass → 401 `invalid_token`; a valid token without a required scope
→ 403 `insufficient_scope`; an Authorization header that is not one bearer token → 400 `invalid_request`.
Each carries a JSON-RPC error body like every other refusal of the guard.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio
from starlette.types import Scope

from lancelot_schema.settings import Settings
from lancelot_server.auth.callers import Principal
from lancelot_server.auth.tokens import StaticTokens
from lancelot_server.auth.verifier import Rejected, Verifier

REALM = "lancelot"
WELL_KNOWN = "/.well-known/oauth-protected-resource"
# RFC 6750 §2.1: b64token; anything else after "Bearer " is a malformed header, not a wrong token.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
# A JWT is three base64url parts; only those go to the JWT verifier.
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# Threads that may wait on the one fetch of the issuer's keys at once; more such tokens queue for them.
KEY_WAITS = 8


class AuthConfigError(ValueError):
    """The auth settings cannot work together; the message names the settings."""


class JwtCheck(Verifier, Protocol):
    """A verifier that may wait on the network (`oauth.JwtVerifier`, fetching the issuer's keys), and says when."""

    def may_block(self, token: str) -> bool: ...


class Challenge(Exception):
    """A request refused for its bearer token: the status (401, 403 or 400), what the answer says, and the
    `WWW-Authenticate` header that tells the client how to authenticate. The guard answers it (`Refusal`)."""

    def __init__(self, status: int, message: str, header: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.header = header


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', "'") + '"'


@dataclass(frozen=True)
class Oauth:
    """The resource server's public facts: what tokens must be issued for, and by whom."""

    resource: str
    issuer: str
    scopes: tuple[str, ...] = ()

    @property
    def metadata_url(self) -> str:
        """Where RFC 9728 §3.1 puts this resource's metadata: the well-known path before the resource's path."""
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{parts.path.rstrip('/')}"

    def metadata(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "Lancelot",
        }
        if self.scopes:
            document["scopes_supported"] = list(self.scopes)
        return document


@dataclass
class Authenticator:
    """Checks a request's bearer token; `documents` are the paths it publishes without a token (GET)."""

    static: StaticTokens | None = None
    jwt: JwtCheck | None = None
    oauth: Oauth | None = None
    documents: dict[str, bytes] = field(default_factory=dict)
    key_waits: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(KEY_WAITS), repr=False)

    def __post_init__(self) -> None:
        if self.oauth is not None:
            body = json.dumps(self.oauth.metadata(), indent=2).encode()
            path = urlsplit(self.oauth.metadata_url).path
            # Path-suffixed (RFC 9728 §3.1) and at the root, where MCP clients also look (2025-11-25).
            self.documents = {path: body, WELL_KNOWN: body}

    def challenge(self, error: str | None = None, description: str | None = None, scope: str | None = None) -> str:
        params = [f"realm={_quoted(REALM)}"]
        if self.oauth is not None:
            params.append(f"resource_metadata={_quoted(self.oauth.metadata_url)}")
        if error is not None:
            params.append(f"error={_quoted(error)}")
        if description is not None:
            params.append(f"error_description={_quoted(description)}")
        scope = scope or (" ".join(self.oauth.scopes) if self.oauth is not None and self.oauth.scopes else None)
        if scope:
            params.append(f"scope={_quoted(scope)}")
        return "Bearer " + ", ".join(params)

    async def __call__(self, scope: Scope) -> Principal:
        """The caller of this request; else a `Challenge` (401, 403 or 400)."""
        token = self._bearer(scope)
        try:
            return await self._verify(token)
        except Rejected as rejected:
            raise Challenge(
                rejected.status,
                f"{'Unauthorized' if rejected.status == 401 else 'Forbidden'}: {rejected.reason}",
                self.challenge(rejected.error, rejected.reason, rejected.scope),
            ) from None

    def _bearer(self, scope: Scope) -> str:
        values = [bytes(v).decode("latin-1") for k, v in scope["headers"] if k.lower() == b"authorization"]
        scheme, _, token = values[0].strip().partition(" ") if values else ("", "", "")
        if scheme.lower() != "bearer" or not token.strip():
            # No credentials of our scheme: RFC 6750 §3.1 says the challenge carries no error code.
            raise Challenge(401, "Unauthorized: send `Authorization: Bearer TOKEN`", self.challenge())
        token = token.strip()
        if len(values) > 1 or not _TOKEN.fullmatch(token):
            description = "the Authorization header must be `Bearer` and one token"
            raise Challenge(400, f"Bad request: {description}", self.challenge("invalid_request", description))
        return token

    async def _verify(self, token: str) -> Principal:
        rejected: Rejected | None = None
        if self.static is not None:
            try:
                return self.static.verify(token)
            except Rejected as exc:
                rejected = exc
        if self.jwt is not None and _JWT.fullmatch(token):
            if not self.jwt.may_block(token):
                return self.jwt.verify(token)  # keys at hand: CPU work, on the loop
            # A fetch of the issuer's keys may wait: off the event loop, and in threads of its own, so that
            # tokens naming unknown kids never take the threads the tools run in.
            return await anyio.to_thread.run_sync(self.jwt.verify, token, limiter=self.key_waits)
        raise rejected or Rejected("the token is not a JWT")


def _https_or_loopback(url: str, name: str) -> str:
    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme not in ("https", "http") or not parts.netloc or (parts.scheme == "http" and not loopback):
        raise AuthConfigError(f"{name} must be an https:// URL (http:// only on loopback); got {url!r}")
    if parts.fragment or parts.query:
        raise AuthConfigError(f"{name} must not have a query or fragment; got {url!r}")
    return url


def from_settings(settings: Settings) -> Authenticator | None:
    """The authenticator the settings describe, None when no auth is configured; `AuthConfigError` else."""
    auth = settings.auth
    if not auth.configured:
        return None
    static = None
    if auth.tokens or auth.tokens_file:
        try:
            static = StaticTokens(auth.tokens, auth.tokens_file)
        except ValueError as exc:
            raise AuthConfigError(str(exc)) from None
    if auth.oauth_issuer is None:
        if auth.oauth_resource or auth.oauth_jwks_url or auth.oauth_scopes:
            raise AuthConfigError("LANCELOT_OAUTH_RESOURCE, _JWKS_URL and _SCOPES need LANCELOT_OAUTH_ISSUER")
        return Authenticator(static=static)
    if auth.oauth_resource is None:
        raise AuthConfigError(
            "LANCELOT_OAUTH_ISSUER needs LANCELOT_OAUTH_RESOURCE: this server's public MCP URL, which tokens "
            "must name as their audience (for example https://search.example.com/mcp)"
        )
    resource = _https_or_loopback(auth.oauth_resource, "LANCELOT_OAUTH_RESOURCE")
    from lancelot_server.auth.oauth import JwtVerifier

    try:
        jwt = JwtVerifier(auth.oauth_issuer, resource, jwks_url=auth.oauth_jwks_url, required_scopes=auth.oauth_scopes)
    except ValueError as exc:
        raise AuthConfigError(str(exc)) from None
    return Authenticator(static=static, jwt=jwt, oauth=Oauth(resource, auth.oauth_issuer, auth.oauth_scopes))
