"""Pytest fixtures over the real helpers in `tests/support` (loaded for every test by `tests/conftest.py`)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from tests.support.embedding_server import EmbeddingServer


@pytest.fixture
def embedding_server() -> Iterator[EmbeddingServer]:
    """A fresh OpenAI-compatible endpoint on 127.0.0.1 (key `sk-test`; models `test-8`, `test-16`,
    `text-embedding-3-small` and others), stopped after the test. Its `.url` is the openai base URL."""
    with EmbeddingServer() as server:
        yield server


@pytest.fixture
def closed_url() -> str:
    """An endpoint URL on 127.0.0.1 where nothing listens: the port was bound, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def clean_env(tmp_path) -> dict[str, str]:
    """An environment for a Lancelot process that never sees the real user's settings or keychain: no
    LANCEDB_/LANCELOT_/OPENAI_/EMBEDDING_ variables, settings and keyring data under tmp_path, and keyring's `fail`
    backend (no keychain, so lancelot-init uses its encrypted file)."""
    import os

    skip = ("LANCEDB_", "LANCELOT_", "OPENAI_", "EMBEDDING_", "PYTHON_KEYRING", "XDG_")
    environ = {name: value for name, value in os.environ.items() if not name.startswith(skip)}
    return environ | {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
