"""A real authorization server's public side for tests: metadata documents and a JWKS over HTTP on
127.0.0.1, and tokens signed with the keys it publishes (tests/server/auth/test_oauth.py, the e2e auth tests)."""

import contextlib
import json
import threading
import time
from collections import Counter
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

RESOURCE = "https://search.example.com/mcp"


@cache
def rsa_key(n):
    """The n-th RSA key of the session (2048 bits take a moment to make)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(kid, private, **fields):
    algorithm = RSAAlgorithm if isinstance(private, rsa.RSAPrivateKey) else ECAlgorithm
    return {**algorithm.to_jwk(private.public_key(), as_dict=True), "kid": kid, "use": "sig", **fields}


class Issuer:
    """An authorization server's public side: metadata documents and a JWKS, over real HTTP on 127.0.0.1.

    `keys` (kid → private key) are what it publishes and signs with; `hits` counts requests per path;
    `fault` makes every answer a (status, body) pair, or "hang" until the test ends; `delay` slows answers.
    """

    def __init__(self, path="", audience=RESOURCE):
        issuer = self
        self.audience = audience

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                with issuer.lock:
                    issuer.hits[self.path] += 1
                status, body = issuer.answer(self.path)
                self.send_response(status)
                if self.path in issuer.redirects:
                    self.send_header("Location", issuer.redirects[self.path])
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # The server under test may give up on the answer (a timeout the test provokes).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = self.origin + path
        self.jwks_url = self.origin + "/jwks"
        self.keys = {"k1": rsa_key(1)}
        self.extra_jwks = []  # raw entries published besides `keys`
        self.documents = {}  # path → metadata document
        self.redirects = {}  # path → where it moved
        self.hits = Counter()
        self.fault = None
        self.delay = 0.0
        self.lock = threading.Lock()
        self.released = threading.Event()
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def answer(self, path):
        time.sleep(self.delay)
        if self.fault == "hang":
            self.released.wait(10)
            return 503, b"{}"
        if self.fault is not None:
            return self.fault
        if path in self.redirects:
            return 302, b""
        if path == "/jwks":
            keys = [public_jwk(kid, private) for kid, private in self.keys.items()]
            return 200, json.dumps({"keys": keys + self.extra_jwks}).encode()
        if path in self.documents:
            return 200, json.dumps(self.documents[path]).encode()
        return 404, b'{"error": "not found"}'

    def metadata(self, path, **fields):
        """Serve a metadata document at `path` that names this issuer and its JWKS."""
        self.documents[path] = {"issuer": self.url, "jwks_uri": self.jwks_url, **fields}

    def rotate(self, kid, private):
        self.keys = {kid: private}

    def token(self, kid="k1", alg="RS256", private=None, header=None, **claims):
        now = int(time.time())
        payload = {"iss": self.url, "aud": self.audience, "sub": "alice", "iat": now, "exp": now + 300}
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        private = private or self.keys.get(kid) or rsa_key(1)
        return jwt.encode(payload, private, algorithm=alg, headers={"kid": kid, **(header or {})})

    def close(self):
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
