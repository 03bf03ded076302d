"""Pytest fixtures over the real helpers in `tests/support` (loaded for every test by `tests/conftest.py`)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.support.embedding_server import EmbeddingServer
from tests.support.local_model import make_model_folder
from tests.support.s3_server import S3Server, local_aws_env


@pytest.fixture(scope="session")
def _one_embedding_server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer() as server:
        yield server


@pytest.fixture
def embedding_server(_one_embedding_server: EmbeddingServer) -> Iterator[EmbeddingServer]:
    """An OpenAI-compatible endpoint on 127.0.0.1 (key `sk-test`; models `test-8`, `test-16`,
    `text-embedding-3-small` and others), as new to each test: one server for the session, its faults and
    recorded requests forgotten, and answers still held for an earlier test let go. `.url` is the base URL."""
    _one_embedding_server.reset()
    yield _one_embedding_server
    _one_embedding_server.reset()


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a real local embedding model (all-MiniLM-L6-v2, int8 ONNX, 23 MB), for --embed local:FOLDER."""
    return make_model_folder(tmp_path_factory.mktemp("models"))


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


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A real S3-compatible server (moto) on 127.0.0.1 for the whole session, checking signatures and IAM
    policies; each test takes buckets of its own (`s3_server.bucket()`, `s3_server.database(folder)`)."""
    with S3Server() as server:
        yield server


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[dict[str, str]], None]]:
    """Sets the AWS_ variables of this process (Lance reads its credential chain from them) to exactly the
    ones given, and never to the person's own: no other AWS_ variable, no shared config, no instance metadata."""
    import os

    def use(variables: dict[str, str]) -> None:
        for name in [name for name in os.environ if name.startswith("AWS_")]:
            monkeypatch.delenv(name)
        for name, value in {**local_aws_env(), **variables}.items():
            monkeypatch.setenv(name, value)

    use({})
    yield use
