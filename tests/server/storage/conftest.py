"""Fixtures of the storage tests over a bucket of the session's S3 server (moto on 127.0.0.1)."""

from __future__ import annotations

import pytest
from tests.support.s3_server import Keys

from lancelot_schema.settings import resolve
from lancelot_server.storage.store import Store
from lancelot_server.tools import Tools


@pytest.fixture(scope="module")
def s3_db(s3_server, lancelot_db) -> str:
    """The session database (documents, plain, workspace, embedded, embedded_plain) in a bucket of its own."""
    return s3_server.database(lancelot_db)


@pytest.fixture
def s3_tools(s3_server, aws_env):
    """Tools over `uri` with `keys` (the admin's by default), settings resolved as an entry point would."""
    made: list[Tools] = []

    def make(uri: str, keys: Keys | None = None, *, endpoint: str | None = None, **environ: str) -> Tools:
        variables = s3_server.env(keys, endpoint=endpoint)
        aws_env(variables)
        settings = resolve({**variables, "LANCEDB_PATH": uri, **environ})
        made.append(Tools(Store(settings.db_path, settings.storage), settings, protocol_versions=["2025-11-25"]))
        return made[-1]

    yield make
    for tools in made:  # no thread left reading from a bucket: one still inside Lance at exit can abort the process
        tools.store.settle(30)
        tools.close()
