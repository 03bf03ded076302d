"""`--embed local[:MODEL]`: vectors from an ONNX model run here on CPU (the 'local' extra: onnxruntime, tokenizers).

    model = LocalModel.load("all-MiniLM-L6-v2", where, threads=2, say=print_to_stderr)
    model.embed(texts, progress) -> Embeddings      # the same flat float32 vectors as the endpoint path

The model is found by `lancelot_schema.local_models` (a folder, LANCELOT_EMBED_MODEL_PATH, the cache) or fetched
into the cache. A text longer than the model reads (`max_tokens`) is cut into windows of whole tokens, each
embedded, and their pooled vectors averaged by token count before the normalisation: nothing is cut off, as on
the endpoint path. Windows are sorted by length before batching, so a batch pads little. ONNX Runtime uses
`threads` threads for one batch (intra-op) and no more: the readers' worker processes keep their cores.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lancelot_indexer.embedding.embed import Embeddings, EmbedStats
from lancelot_indexer.errors import EmbeddingError, EmbeddingWidthError
from lancelot_indexer.readers.formats import extra_command
from lancelot_schema import local_models
from lancelot_schema.local_models import Found, LocalModelError, Where

HOST = "local"
# Windows per ONNX run: past 32, a run of MiniLM on two cores is no faster per window and holds more memory.
BATCH = 32


class LocalModelUnavailable(EmbeddingError):
    """The model cannot be found, fetched or loaded, or the 'local' extra is missing."""


@dataclass
class LocalModel:
    found: Found
    tokenizer: Any
    session: Any
    inputs: frozenset[str]
    host: str = HOST  # what the table's embedding_host says

    @property
    def name(self) -> str:
        return local_models.stamp(self.found.spec)

    @classmethod
    def load(cls, model: str | None, where: Where, *, threads: int, say: Callable[[str], None]) -> LocalModel:
        """The model `model` (a name, a folder, None for the default), fetched into the cache when missing."""
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError:
            raise LocalModelUnavailable(
                f"--embed local needs the optional 'local' extra: {extra_command('local')}"
            ) from None
        try:
            found = local_models.find(model, where)
            if found is None:
                name = model or local_models.DEFAULT_MODEL
                known = local_models.KNOWN.get(name)
                if known is None:
                    raise LocalModelError(local_models.missing(name, where, indexing=True))
                from lancelot_schema import model_download

                found = model_download.fetch(known, where, say, indexing=True)
        except LocalModelError as exc:
            raise LocalModelUnavailable(str(exc)) from None
        try:
            tokenizer = Tokenizer.from_file(str(found.folder / local_models.TOKENIZER_FILE))
            tokenizer.no_truncation()  # long texts are cut into windows here, never truncated
            tokenizer.no_padding()
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(
                str(found.folder / local_models.MODEL_FILE), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # a damaged or foreign file: ONNX Runtime and tokenizers raise their own kinds
            raise LocalModelUnavailable(f"the model in {found.folder} cannot be loaded ({exc})") from None
        return cls(found, tokenizer, session, frozenset(item.name for item in session.get_inputs()))

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None, expected_width: int | None = None
    ) -> Embeddings:
        """One unit vector per text, in order; `progress(n)` as n more texts are done."""
        import numpy as np

        spec = self.found.spec
        stats = EmbedStats()
        windows: list[list[int]] = []
        owners: list[int] = []
        prefix = spec.passage_prefix
        for number, encoding in enumerate(self.tokenizer.encode_batch([prefix + text for text in texts])):
            parts = _windows(encoding.ids, spec.max_tokens)
            stats.split_texts += len(parts) > 1
            windows.extend(parts)
            owners.extend([number] * len(parts))
        if not windows:
            return Embeddings(flat=array("f"), width=0, model=self.name, host=HOST, stats=stats)
        order = sorted(range(len(windows)), key=lambda at: len(windows[at]))
        pooled: Any = None
        remaining = np.bincount(np.array(owners), minlength=len(texts))
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            vectors = self._run([windows[at] for at in batch])
            if pooled is None:
                pooled = np.zeros((len(texts), vectors.shape[1]), dtype=np.float64)
            done = 0
            for at, vector in zip(batch, vectors, strict=True):
                pooled[owners[at]] += vector * len(windows[at])  # a window's weight: its tokens
                remaining[owners[at]] -= 1
                done += remaining[owners[at]] == 0
            stats.requests += 1
            if progress is not None and done:
                progress(int(done))
        if spec.normalize:
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        width = pooled.shape[1]
        if expected_width is not None and width != expected_width:
            raise EmbeddingWidthError(
                f"{self.name} gives vectors of width {width}, but the table's vectors are {expected_width} wide"
            )
        flat = array("f", pooled.astype(np.float32).tobytes())
        return Embeddings(flat=flat, width=width, model=self.name, host=HOST, stats=stats)

    def _run(self, windows: list[list[int]]) -> Any:
        """Each window's pooled (not yet normalised) vector."""
        import numpy as np

        longest = max(len(window) for window in windows)
        ids = np.zeros((len(windows), longest), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, window in enumerate(windows):
            ids[row, : len(window)] = window
            mask[row, : len(window)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feeds)[0]
        if self.found.spec.pooling == "cls":
            return hidden[:, 0, :].astype(np.float64)
        weights = mask[..., None].astype(np.float64)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)


def _windows(ids: list[int], max_tokens: int) -> list[list[int]]:
    """`ids` (with the tokenizer's first and last special tokens) in windows of at most `max_tokens`, each
    with those special tokens again."""
    if len(ids) <= max_tokens:
        return [ids]
    first, body, last = ids[0], ids[1:-1], ids[-1]
    size = max_tokens - 2
    return [[first, *body[start : start + size], last] for start in range(0, len(body), size)]
