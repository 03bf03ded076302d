"""Embed queries for a table whose vectors were made here (`lancelot-index --embed local`, stamped `local:NAME`).

    LocalEmbedders(settings).get("all-MiniLM-L6-v2") -> LocalEmbedder     # .require(), .embed_all(texts)

The model is the one the table names, found as the indexer finds it (`lancelot_schema.local_models`: the
folder LANCELOT_EMBED_MODEL_PATH, else the cache folder), and downloaded only when LANCELOT_EMBED_DOWNLOAD asks
for it: a server never fetches anything on its own. onnxruntime and tokenizers (the 'local' extra) are imported
when the first vector or hybrid query of such a table comes, so a text-only table starts as fast as without
them; `require` checks that the model can be had without loading it. One session serves every query, each on
QUERY_THREADS threads: queries are short, and several arrive at once from the tools' thread pool.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

import structlog

from lancelot_schema import local_models
from lancelot_schema.local_models import Found, LocalModelError
from lancelot_schema.settings import Settings
from lancelot_server.errors import VectorSearchUnavailable

log = structlog.get_logger("lancelot.local_embed")

QUERY_THREADS = 1
EXTRA = "pip install 'lancelot-server[local]' (or scripts/install --extras local from a clone)"


class LocalEmbedder:
    """One local model, loaded on the first query that needs it."""

    def __init__(self, name: str, settings: Settings) -> None:
        self.name = name
        self.settings = settings
        self._lock = threading.Lock()
        self._loaded: tuple[Found, Any, Any, frozenset[str]] | None = None

    def require(self) -> None:
        """Raise `VectorSearchUnavailable` when the model or the extra is missing: what to install or set."""
        if self._loaded is not None:
            return
        if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("tokenizers") is None:
            raise VectorSearchUnavailable(
                f"the table's vectors come from the local model {self.name}, which needs the server's 'local' "
                f"extra: {EXTRA}"
            )
        self._found()

    def _found(self) -> Found | None:
        """The model's folder, or None when a download is allowed and will bring it."""
        where = self.settings.local
        try:
            found = local_models.find(self.name, where)
        except LocalModelError as exc:
            raise VectorSearchUnavailable(str(exc)) from None
        if found is None and not (where.download and self.name in local_models.KNOWN):
            raise VectorSearchUnavailable(local_models.missing(self.name, where))
        return found

    def embed_all(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text, in order, from one run of the model."""
        import numpy as np

        found, tokenizer, session, inputs = self._load()
        spec = found.spec
        encodings = tokenizer.encode_batch([spec.query_prefix + text for text in texts])
        ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        if spec.pooling == "cls":
            pooled = hidden[:, 0, :].astype(np.float64)
        else:
            weights = mask[..., None].astype(np.float64)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if spec.normalize:
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return [[float(value) for value in row] for row in pooled.astype(np.float32)]

    def _load(self) -> tuple[Found, Any, Any, frozenset[str]]:
        with self._lock:
            if self._loaded is None:
                self.require()
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[Found, Any, Any, frozenset[str]]:
        import onnxruntime
        from tokenizers import Tokenizer

        found = self._found()
        if found is None:  # LANCELOT_EMBED_DOWNLOAD: the operator asked for it
            from lancelot_schema import model_download

            try:
                found = model_download.fetch(local_models.KNOWN[self.name], self.settings.local, log.info)
            except LocalModelError as exc:
                raise VectorSearchUnavailable(str(exc)) from None
        try:
            tokenizer = Tokenizer.from_file(str(found.folder / local_models.TOKENIZER_FILE))
            tokenizer.enable_truncation(max_length=found.spec.max_tokens)
            padding = tokenizer.padding or {}
            tokenizer.enable_padding(pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]"))
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = QUERY_THREADS
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(
                str(found.folder / local_models.MODEL_FILE), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # a damaged or foreign file: ONNX Runtime and tokenizers raise their own kinds
            raise VectorSearchUnavailable(f"the local model in {found.folder} cannot be loaded ({exc})") from None
        return found, tokenizer, session, frozenset(item.name for item in session.get_inputs())


class LocalEmbedders:
    """The server's local models by name, each made once."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._models: dict[str, LocalEmbedder] = {}

    def get(self, name: str) -> LocalEmbedder:
        with self._lock:
            if name not in self._models:
                self._models[name] = LocalEmbedder(name, self.settings)
            return self._models[name]
