"""A real OpenAI-compatible embeddings endpoint on 127.0.0.1, written for the tests and the benches.

It speaks `POST /v1/embeddings` the way OpenAI does (float and base64 answers, bearer key, OpenAI's
error JSON, 404 for an unknown model, 400 past the per-request limits) and can be told at run time to
misbehave: N answers of 429 with `Retry-After`, N answers of 500, slow answers, vectors of the wrong width,
200 answers whose body is not an embedding.

Vectors are deterministic and derived from the text: a hashed bag of words plus a component from the
whole text's hash, normalised. Texts that share words are therefore close, which keeps vector and hybrid
search meaningful in tests. A real model can be plugged in instead (`embed=`), as `scripts/bench-quality`
does. An answer leaves `latency` after its request came in, the endpoint's own work included, so that a
bench measures the client against that latency, as against a remote endpoint, whatever the fake vectors
cost on the shared cores. Requests are served in threads, concurrently. Standard library and numpy only,
so it also runs inside a bench's throwaway venv:

    python -m tests.support.embedding_server --port 0 --latency-ms 50    # prints the port, serves
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from tests.support.fake_vectors import count_tokens, encode_base64, hashed_vector, hashed_vectors

# (texts, model) -> one vector per text. Used to serve a real model behind this endpoint.
EmbedFn = Callable[[list[str], str], Sequence[Sequence[float]]]

DEFAULT_MODELS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "test-8": 8,
    "test-16": 16,
}
DEFAULT_KEY = "sk-test"


@dataclass(frozen=True)
class Recorded:
    """One request as the endpoint saw it."""

    model: str
    inputs: tuple[str, ...]
    encoding_format: str
    status: int
    started: float
    ended: float


@dataclass
class _Fault:
    kind: str  # "status", "slow", "width" or "body"
    status: int = 500
    retry_after: float | None = None
    seconds: float = 0.0
    width: int = 0
    code: str | None = None
    body: bytes = b""


class _ApiError(Exception):
    def __init__(
        self, status: int, message: str, code: str | None = None, kind: str = "invalid_request_error", **headers: str
    ) -> None:
        super().__init__(message)
        self.status, self.kind, self.code, self.headers = status, kind, code, headers


class EmbeddingServer:
    """The endpoint, served from a thread; use as a context manager or call `start()` and `stop()`."""

    def __init__(
        self,
        *,
        api_key: str | None = DEFAULT_KEY,
        models: dict[str, int] | None = None,
        latency: float = 0.0,
        embed: EmbedFn | None = None,
        max_inputs: int = 2048,
        max_input_tokens: int = 8192,
        max_request_tokens: int = 300_000,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.api_key = api_key  # None: any key, or none, is accepted (a local endpoint)
        self.models = dict(DEFAULT_MODELS if models is None else models)
        self.latency = latency
        self.embed = embed
        self.max_inputs, self.max_input_tokens, self.max_request_tokens = (
            max_inputs,
            max_input_tokens,
            max_request_tokens,
        )
        self._lock = threading.Lock()
        self._release = threading.Event()  # set by stop() and reset(): answers held back go at once
        self._faults: deque[_Fault] = deque()
        self._requests: list[Recorded] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self._httpd = _QuietServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- life cycle ---------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to give the openai client (`OPENAI_BASE_URL`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> EmbeddingServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="embedding-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()  # wakes slow answers
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> EmbeddingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- switches -----------------------------------------------------------------------------------
    def fail_next(
        self, status: int, times: int = 1, *, retry_after: float | None = None, code: str | None = None
    ) -> None:
        """Answer the next `times` embedding requests with `status` (429 carries `Retry-After` if given)."""
        self._queue(_Fault("status", status=status, retry_after=retry_after, code=code), times)

    def slow_next(self, seconds: float, times: int = 1) -> None:
        """Hold the next `times` answers for `seconds` (on top of `latency`)."""
        self._queue(_Fault("slow", seconds=seconds), times)

    def wrong_width_next(self, width: int, times: int = 1) -> None:
        """Answer the next `times` requests with vectors `width` wide, whatever the model."""
        self._queue(_Fault("width", width=width), times)

    def bad_body_next(self, body: bytes, times: int = 1) -> None:
        """Answer the next `times` requests 200 with `body` as it is (not JSON, no vectors...)."""
        self._queue(_Fault("body", body=body), times)

    def _queue(self, fault: _Fault, times: int) -> None:
        with self._lock:
            self._faults.extend(fault for _ in range(times))

    def reset(self, seconds: float = 10.0) -> None:
        """Forget recorded requests and pending faults, and let answers still held back go (unrecorded): as
        new, for the next test of a shared endpoint. Waits up to `seconds` for those answers to leave."""
        with self._lock:
            self._faults.clear()
            self._requests.clear()
            self._release.set()
            self._release = threading.Event()
        deadline = time.monotonic() + seconds
        while self._in_flight and time.monotonic() < deadline:
            time.sleep(0.005)
        with self._lock:
            self.max_in_flight = self._in_flight

    # -- what happened ------------------------------------------------------------------------------
    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def input_count(self) -> int:
        return sum(len(r.inputs) for r in self.requests)

    def stats(self) -> dict[str, int]:
        done = self.requests
        return {
            "requests": len(done),
            "ok": sum(r.status == 200 for r in done),
            "inputs": sum(len(r.inputs) for r in done if r.status == 200),
            "max_in_flight": self.max_in_flight,
        }

    def vector(self, text: str, model: str) -> list[float]:
        """The vector this endpoint answers for `text` under `model`."""
        if self.embed is not None:
            return [float(x) for x in self.embed([text], model)[0]]
        return hashed_vector(text, self.models[model])

    # -- the API ------------------------------------------------------------------------------------
    def serve(self, authorization: str | None, body: bytes) -> tuple[int, dict[str, Any] | bytes, dict[str, str]]:
        """Answer one `POST /v1/embeddings`: (status, JSON payload or raw body, extra headers)."""
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            return self._serve(authorization, body)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _serve(self, authorization: str | None, body: bytes) -> tuple[int, dict[str, Any] | bytes, dict[str, str]]:
        started = time.monotonic()
        release = self._release
        model, inputs, encoding, hold = "", [], "float", self.latency
        try:
            request = _parse(body)
            model, inputs = str(request.get("model", "")), _inputs(request.get("input"))
            encoding = str(request.get("encoding_format") or "float")
            fault = self._next_fault()
            hold += fault.seconds if fault is not None and fault.kind == "slow" else 0.0
            self._check_key(authorization)
            if model not in self.models:
                message = f"The model `{model}` does not exist or you do not have access to it."
                raise _ApiError(404, message, "model_not_found")
            if fault is not None and fault.kind == "status":
                raise _status_error(fault)
            self._check_limits(inputs)
            width = fault.width if fault is not None and fault.kind == "width" else None
            answer = self._answer(model, list(inputs), encoding, request.get("dimensions"), width)
            status, payload, headers = 200, answer, {}
            if fault is not None and fault.kind == "body":
                payload = fault.body
        except _ApiError as error:
            status, headers = error.status, error.headers
            payload = {"error": {"message": str(error), "type": error.kind, "param": None, "code": error.code}}
        # The answer is worked out first and held back until `latency` has passed since the request came in,
        # as from a remote endpoint whose own work is part of its latency. Event.wait lets go of the GIL
        # and wakes at once on stop() or reset().
        release.wait(max(0.0, started + hold - time.monotonic()))
        with self._lock:
            if release is self._release:  # not an answer a reset let go: that belonged to an earlier test
                self._requests.append(Recorded(model, tuple(inputs), encoding, status, started, time.monotonic()))
        return status, payload, headers

    def _next_fault(self) -> _Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _check_key(self, authorization: str | None) -> None:
        if self.api_key is None:
            return
        if not authorization or not authorization.startswith("Bearer "):
            raise _ApiError(401, "You didn't provide an API key.")
        given = authorization.removeprefix("Bearer ").strip()
        if given != self.api_key:
            shown = given[:3] + "*" * max(0, len(given) - 7) + given[-4:]
            raise _ApiError(401, f"Incorrect API key provided: {shown}.", "invalid_api_key")

    def _check_limits(self, inputs: Sequence[str]) -> None:
        if len(inputs) > self.max_inputs:
            raise _ApiError(400, f"'$.input' is invalid: at most {self.max_inputs} inputs, got {len(inputs)}.")
        tokens = [count_tokens(text) for text in inputs]
        if tokens and max(tokens) > self.max_input_tokens:
            message = f"This model's maximum context length is {self.max_input_tokens} tokens, however you "
            raise _ApiError(400, message + f"requested {max(tokens)} tokens.", "context_length_exceeded")
        if sum(tokens) > self.max_request_tokens:
            message = f"Requested {sum(tokens)} tokens, max {self.max_request_tokens} tokens per request."
            raise _ApiError(400, message, "max_tokens_per_request")

    def _answer(
        self, model: str, inputs: list[str], encoding: str, dimensions: object, width: int | None
    ) -> dict[str, Any]:
        if self.embed is not None:
            vectors = np.asarray(self.embed(inputs, model), dtype=np.float64)
        else:
            size = dimensions if isinstance(dimensions, int) and 0 < dimensions <= self.models[model] else None
            vectors = hashed_vectors(inputs, size or self.models[model])
        if width is not None:
            wrong = np.zeros((len(inputs), width))
            kept = min(width, vectors.shape[1])
            wrong[:, :kept] = vectors[:, :kept]
            vectors = wrong
        embeddings = encode_base64(vectors) if encoding == "base64" else vectors.tolist()
        data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(embeddings)]
        used = sum(count_tokens(text) for text in inputs)
        return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": used, "total_tokens": used}}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that timed out and hung up
            super().handle_error(request, client_address)


def _parse(body: bytes) -> dict[str, Any]:
    try:
        request = json.loads(body)
    except ValueError:
        raise _ApiError(400, "We could not parse the JSON body of your request.") from None
    if not isinstance(request, dict):
        raise _ApiError(400, "The body must be a JSON object.")
    return request


def _inputs(raw: object) -> list[str]:
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
        raise _ApiError(400, "'$.input' is invalid: give a string or a list of strings, none of them empty.")
    return texts


def _status_error(fault: _Fault) -> _ApiError:
    headers = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
    if fault.status == 429:
        message = "Rate limit reached for requests. Please try again later."
        return _ApiError(429, message, fault.code or "rate_limit_exceeded", "requests", **headers)
    message = "The server had an error while processing your request. Sorry about that!"
    return _ApiError(fault.status, message, fault.code, "server_error", **headers)


def _handler_for(endpoint: EmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
        disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms delayed-ACK stall

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.split("?")[0] != "/v1/embeddings":
                self._send(
                    404, {"error": {"message": f"Invalid URL (POST {self.path})", "type": "invalid_request_error"}}
                )
                return
            status, payload, headers = endpoint.serve(self.headers.get("Authorization"), body)
            self._send(status, payload, headers)

        def do_GET(self) -> None:
            if self.path == "/_stats":  # for benches that run the endpoint as a subprocess
                self._send(200, endpoint.stats())
            else:
                self._send(
                    404, {"error": {"message": f"Invalid URL (GET {self.path})", "type": "invalid_request_error"}}
                )

        def _send(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stderr
            pass

    return Handler


def _model_option(text: str) -> tuple[str, int]:
    name, _, width = text.partition("=")
    return name, int(width)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="each answer leaves this long after its request")
    parser.add_argument("--api-key", default=DEFAULT_KEY, help="the accepted key; empty accepts any")
    parser.add_argument("--model", action="append", type=_model_option, default=[], metavar="NAME=WIDTH")
    args = parser.parse_args(argv)
    models = {**DEFAULT_MODELS, **dict(args.model)}
    server = EmbeddingServer(
        api_key=args.api_key or None, models=models, latency=args.latency_ms / 1000, port=args.port
    )
    run(server)


def run(server: EmbeddingServer) -> None:
    """Start `server`, print its port on stdout, serve until SIGTERM or SIGINT, then print stats on stderr."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with server:
        print(server.port, flush=True)
        while not stop.wait(0.2):
            pass
    print(json.dumps(server.stats()), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
