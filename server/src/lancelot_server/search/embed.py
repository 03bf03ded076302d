"""Embed a query for vector and hybrid search through the OpenAI API or any OpenAI-compatible endpoint.

The openai package is imported on the first vector search, never before. A query path never retries
and times out quickly: a failed embedding is not an error, it sends the search to text with a note.
An endpoint is usable with an API key, or without one when OPENAI_BASE_URL names it (a local server
such as Ollama needs none).

A slow or broken endpoint must not hold text search up. Tools run in a bounded pool of threads, so
at most MAX_IN_FLIGHT embedding requests wait on the endpoint at once (a search that finds no free
slot within SLOT_WAIT_S goes to text), and after the endpoint times out, cannot be reached or answers
5xx/429 or nonsense, vector search is skipped for COOL_DOWN_S before it is tried again.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit

from lancelot_schema.settings import Settings
from lancelot_server.errors import VectorSearchUnavailable

OPENAI_HOST = "api.openai.com"
OPENAI_BASE_URL = f"https://{OPENAI_HOST}/v1"
CONNECT_TIMEOUT_S = 3.0
TOTAL_TIMEOUT_S = 10.0
MAX_IN_FLIGHT = 8
SLOT_WAIT_S = 2.0
COOL_DOWN_S = 30.0


def endpoint_host(settings: Settings) -> str:
    """Where query text goes for embedding: the host of OPENAI_BASE_URL, or OpenAI's."""
    if settings.base_url is None:
        return OPENAI_HOST
    try:
        return urlsplit(settings.base_url).netloc or settings.base_url
    except ValueError:
        # A malformed URL (an unclosed IPv6 bracket): shown as given; vector search says why it cannot run.
        return settings.base_url


class Embedder:
    """One reusable client for the configured endpoint and model."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: Any = None
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_IN_FLIGHT)
        self._failed: tuple[float, str] | None = None  # (monotonic time, why) of the last endpoint failure

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                try:
                    self._client = openai.OpenAI(
                        # A local endpoint may need no key; the client insists on some value.
                        api_key=self.settings.api_key or "no-key",
                        # Explicit, so that the client never reads the environment itself.
                        base_url=self.settings.base_url or OPENAI_BASE_URL,
                        max_retries=0,
                        timeout=openai.Timeout(TOTAL_TIMEOUT_S, connect=CONNECT_TIMEOUT_S),
                    )
                except Exception as exc:
                    # Building the client does no I/O: what fails here is the URL (httpx's InvalidURL, say).
                    if self.settings.base_url is None:
                        raise
                    raise VectorSearchUnavailable(
                        f"OPENAI_BASE_URL {self.settings.base_url!r} is not a usable URL ({exc})"
                    ) from exc
            return self._client

    def close(self) -> None:
        """Close the client's pooled connections (the server keeps them for its whole life)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    @property
    def usable(self) -> bool:
        """A key, or an endpoint of one's own that may need none."""
        return self.settings.has_api_key or self.settings.base_url is not None

    def require(self) -> None:
        """Raise `VectorSearchUnavailable` when there is no endpoint to send a query to."""
        if not self.usable:
            raise VectorSearchUnavailable(
                "no API key: vector search needs OPENAI_API_KEY (or a key stored by lancelot-init), "
                "or OPENAI_BASE_URL naming an endpoint that needs none"
            )

    def embed(self, text: str) -> list[float]:
        return self.embed_all([text])[0]

    def embed_all(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in their order, from one request (the endpoints take a list)."""
        self.require()
        self._check_cool_down()
        if not self._slots.acquire(timeout=SLOT_WAIT_S):
            raise VectorSearchUnavailable(
                f"vector search skipped: {MAX_IN_FLIGHT} embedding requests to {endpoint_host(self.settings)} "
                "are already waiting"
            )
        try:
            return self._request(texts)
        finally:
            self._slots.release()

    def _check_cool_down(self) -> None:
        failed = self._failed
        if failed is None:
            return
        age = time.monotonic() - failed[0]
        if age < COOL_DOWN_S:
            raise VectorSearchUnavailable(
                f"vector search skipped: it failed {age:.0f} s ago ({failed[1]}); "
                f"it is tried again {COOL_DOWN_S:.0f} s after a failure"
            )

    def _request(self, texts: list[str]) -> list[list[float]]:
        import openai

        host = endpoint_host(self.settings)
        try:
            response = self._openai().embeddings.create(model=self.settings.embedding_model, input=texts)
            # Each item names the input it embeds; an answer short of one is not an embedding of every text.
            ordered = sorted(response.data, key=lambda item: item.index)
            if [item.index for item in ordered] != list(range(len(texts))):
                raise ValueError(f"{len(ordered)} embeddings for {len(texts)} texts")
            vectors = [[float(value) for value in item.embedding] for item in ordered]
        except VectorSearchUnavailable:
            raise
        except openai.APIStatusError as exc:
            reason = f"{host} answered {exc.status_code}: {_message(exc)}"
            # Rate limits and server errors may last: back off. A 4xx is the request's own fault.
            self._note_failure(reason, lasting=exc.status_code == 429 or exc.status_code >= 500)
            raise VectorSearchUnavailable(f"vector search failed: {reason}") from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            reason = f"cannot reach {host} ({type(cause).__name__}: {cause})"
            self._note_failure(reason, lasting=True)
            raise VectorSearchUnavailable(f"vector search failed: {reason}") from exc
        except Exception as exc:
            # A 200 whose body is not JSON, holds no vector or holds something else: the openai client
            # raises ValueError, IndexError, TypeError... none of them is the search's fault.
            reason = f"{host} did not answer with an embedding ({type(exc).__name__}: {exc})"
            self._note_failure(reason, lasting=True)
            raise VectorSearchUnavailable(f"vector search failed: {reason}") from exc
        self._failed = None
        return vectors

    def _note_failure(self, reason: str, *, lasting: bool) -> None:
        if lasting:
            self._failed = (time.monotonic(), reason)


def _message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(exc.message)
