"""Embed a query for vector and hybrid search through the OpenAI API or any OpenAI-compatible endpoint.

The openai package is imported on the first vector search, never before. A query path never retries
and times out quickly: a failed embedding is not an error, it sends the search to text with a note.
An endpoint is usable with an API key, or without one when OPENAI_BASE_URL names it (a local server
such as Ollama needs none).
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

from lancelot_schema.settings import Settings
from lancelot_server.errors import VectorSearchUnavailable

OPENAI_HOST = "api.openai.com"
OPENAI_BASE_URL = f"https://{OPENAI_HOST}/v1"
CONNECT_TIMEOUT_S = 3.0
TOTAL_TIMEOUT_S = 15.0


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
        self.require()
        import openai

        try:
            response = self._openai().embeddings.create(model=self.settings.embedding_model, input=[text])
        except openai.APIStatusError as exc:
            raise VectorSearchUnavailable(
                f"vector search failed: {endpoint_host(self.settings)} answered {exc.status_code}: {_message(exc)}"
            ) from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise VectorSearchUnavailable(
                f"vector search failed: cannot reach {endpoint_host(self.settings)} ({type(cause).__name__}: {cause})"
            ) from exc
        except openai.OpenAIError as exc:
            raise VectorSearchUnavailable(f"vector search failed: {exc}") from exc
        if not response.data:
            raise VectorSearchUnavailable("vector search failed: the endpoint returned no embedding")
        return [float(value) for value in response.data[0].embedding]


def _message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(exc.message)
