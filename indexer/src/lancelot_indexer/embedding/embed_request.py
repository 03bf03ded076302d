"""One embedding request to the endpoint, retried as `Retry` says, its failures named as `EmbeddingError`s.

The openai client's own retries are off (`max_retries=0`), so these are the only ones: exponential
backoff with full jitter on 429, 5xx, 408/409, timeouts and dropped connections, honouring
`Retry-After-Ms` and `Retry-After`. A refused key, an unknown model or a refused request fail at once.
"""

from __future__ import annotations

import base64
import json
import math
import random
import sys
import threading
from array import array
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import structlog

from lancelot_indexer.errors import (
    EmbeddingEndpointError,
    EmbeddingError,
    EmbeddingKeyError,
    EmbeddingModelError,
    EmbeddingRateLimited,
    EmbeddingUnreachable,
    EmbeddingWidthError,
)

log = structlog.get_logger("lancelot_indexer.embed")

OPENAI_BASE_URL = "https://api.openai.com/v1"


def endpoint_host(base_url: str | None) -> str:
    """The host the texts are sent to, for messages and the table's metadata."""
    try:
        return urlsplit(base_url or OPENAI_BASE_URL).netloc or str(base_url)
    except ValueError:
        # A malformed URL (an unclosed IPv6 bracket): the request reports it; the message names it as given.
        return str(base_url)


@dataclass(frozen=True)
class Retry:
    """How long to keep trying one request. Delays grow as base·2ⁿ up to `max_delay`, fully jittered."""

    attempts: int = 8  # for 429 and 5xx
    timeout_attempts: int = 3  # a slow endpoint is still working on what timed out: resend it rarely
    connect_attempts: int = 3  # a refused connection rarely heals quickly
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0  # a longer Retry-After (a daily quota) fails now instead

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if retry_after is not None:
            return retry_after + random.uniform(0, self.base_delay)  # spread the workers a little
        return random.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


@dataclass
class EmbedStats:
    """What the run cost: requests made (retries included), texts split, and the waits before retries."""

    requests: int = 0
    retries: int = 0
    inputs: int = 0
    split_texts: int = 0
    waits: list[float] = field(default_factory=list)

    def add(self, other: EmbedStats) -> None:
        """Count `other`'s too (of another part of the same texts)."""
        self.requests += other.requests
        self.retries += other.retries
        self.inputs += other.inputs
        self.split_texts += other.split_texts
        self.waits.extend(other.waits)


def make_client(api_key: str | None, base_url: str | None, timeout: float) -> Any:
    import openai

    try:
        return openai.OpenAI(
            api_key=api_key or "no-key",  # a local endpoint may need none; the client insists on some value
            base_url=base_url or OPENAI_BASE_URL,  # explicit, so the client never reads the environment
            max_retries=0,
            timeout=openai.Timeout(timeout, connect=min(timeout, 10.0)),
        )
    except Exception as exc:
        # Building the client does no I/O: what fails here is the URL (httpx's InvalidURL, say).
        if base_url is None:
            raise
        raise EmbeddingEndpointError(f"OPENAI_BASE_URL {base_url!r} is not a usable URL ({exc}).") from exc


class Stopped(EmbeddingError):
    """Another request failed for good; this one gave up waiting."""


@dataclass
class Caller:
    """Sends one batch, retrying as `retry` says, and turns failures into `EmbeddingError`s."""

    model: str
    host: str
    retry: Retry
    client: Any
    stop: threading.Event = field(default_factory=threading.Event)

    def embed(self, batch: list[str], stats: EmbedStats, lock: threading.Lock) -> list[array[float]]:
        import openai

        attempt = 0
        while True:
            attempt += 1
            with lock:
                stats.requests += 1
            try:
                # The client's low-level post (its documented way to a raw answer): `embeddings.create`
                # walks every input to transform it and builds a model object per vector, as much CPU as
                # the request itself takes on a fast endpoint (docs/benchmarks.md). Errors, timeouts and
                # statuses are raised exactly as `create` raises them.
                answer = self.client.post(
                    "/embeddings",
                    body={"model": self.model, "input": batch, "encoding_format": "base64"},
                    cast_to=str,  # the body as text; the HTTP library's response type varies by openai version
                )
                got = _decode(_payload(answer, self.model, self.host), len(batch), self.model, self.host)
                with lock:
                    stats.inputs += len(batch)
                return got
            except openai.APIError as error:
                wait_s = self._wait_or_raise(error, attempt)
            log.warning("embedding request failed; retrying", host=self.host, attempt=attempt, wait_s=round(wait_s, 2))
            with lock:
                stats.retries += 1
                stats.waits.append(wait_s)
            if self.stop.wait(wait_s):
                raise Stopped("stopped: another embedding request failed")

    def _wait_or_raise(self, error: Exception, attempt: int) -> float:
        """Seconds to wait before trying again, or the final error for `error`."""
        import openai

        where = f"{self.model} at {self.host}"
        if isinstance(error, openai.APITimeoutError):
            if attempt < self.retry.timeout_attempts:
                return self.retry.delay(attempt, None)
            raise EmbeddingUnreachable(f"{self.host} did not answer in time, {attempt} times in a row") from error
        if isinstance(error, openai.APIConnectionError):
            if attempt < self.retry.connect_attempts:
                return self.retry.delay(attempt, None)
            cause = error.__cause__ or error
            raise EmbeddingUnreachable(
                f"cannot reach the embedding endpoint {self.host} ({cause}); check OPENAI_BASE_URL"
            ) from error
        if not isinstance(error, openai.APIStatusError):
            raise EmbeddingEndpointError(f"{where}: {error}") from error
        status, said = error.status_code, _said(error)
        if status in (401, 403):
            raise EmbeddingKeyError(
                f"{self.host} refused the API key ({status}: {said}); check OPENAI_API_KEY or run lancelot-init"
            ) from error
        if status == 404:
            hint = (
                "check EMBEDDING_MODEL"
                if error.code == "model_not_found"
                else "check EMBEDDING_MODEL and OPENAI_BASE_URL"
            )
            raise EmbeddingModelError(
                f"{self.host} does not know the model {self.model} (404: {said}); {hint}"
            ) from error
        if status == 429:
            if error.code == "insufficient_quota":
                raise EmbeddingRateLimited(f"{self.host}: the account's quota is used up (429: {said})") from error
            retry_after = _retry_after(error)
            if retry_after is not None and retry_after > self.retry.max_retry_after:
                raise EmbeddingRateLimited(
                    f"{self.host} asks to wait {retry_after:.0f} s before the next request (rate limit); try later"
                ) from error
            if attempt < self.retry.attempts:
                return self.retry.delay(attempt, retry_after)
            raise EmbeddingRateLimited(
                f"{self.host} kept answering 429 (rate limit) and it never cleared: {attempt} attempts"
            ) from error
        if status >= 500 or status in (408, 409):
            if attempt < self.retry.attempts:
                return self.retry.delay(attempt, _retry_after(error))
            raise EmbeddingEndpointError(f"{self.host} failed {attempt} times in a row ({status}: {said})") from error
        raise EmbeddingEndpointError(f"{where} refused the request ({status}: {said})") from error


def _said(error: Any) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(error.message)


def _retry_after(error: Any) -> float | None:
    """Seconds from `Retry-After-Ms` or `Retry-After` (seconds; an HTTP date is left to the backoff)."""
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, ""))
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            return value * scale
    return None


def _payload(answer: str, model: str, host: str) -> list[Any]:
    """The `data` list of an embeddings answer, sorted by `index`."""
    try:
        data = json.loads(answer)["data"]
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise TypeError("data is not a list of objects")
        data.sort(key=lambda item: int(item["index"]))
    except (ValueError, KeyError, TypeError) as error:
        raise EmbeddingEndpointError(f"{model} at {host} answered something other than embeddings ({error})") from error
    return data


def _decode(data: list[Any], expected: int, model: str, host: str) -> list[array[float]]:
    if len(data) != expected:
        raise EmbeddingEndpointError(f"{model} at {host} answered {len(data)} vectors for {expected} texts")
    vectors: list[array[float]] = []
    for item in data:
        raw = item.get("embedding")
        try:
            if isinstance(raw, str):  # base64 float32, little-endian, as asked
                vector = array("f", base64.b64decode(raw, validate=True))
                if sys.byteorder != "little":
                    vector.byteswap()
            else:  # an endpoint that ignores encoding_format
                vector = array("f", raw)
        except (ValueError, TypeError) as error:
            raise EmbeddingEndpointError(f"{model} at {host} answered an unreadable vector ({error})") from error
        vectors.append(vector)
    widths = {len(vector) for vector in vectors}
    if len(widths) != 1 or 0 in widths:
        raise EmbeddingWidthError(f"{model} at {host} answered vectors of differing widths {sorted(widths)}")
    return vectors
