"""The fake endpoint's vectors: deterministic, derived from the text, close for texts that share words.

A text's vector is a hashed bag of its words (each word adds ±1 at a slot chosen by its hash) plus 0.5
at a slot chosen by the whole text's hash, normalised. A request's texts are computed together with
numpy, so that an answer costs the endpoint well under a millisecond per hundred texts: a real remote
endpoint's cost is its latency, not CPU on the cores the indexer runs on, and the benches measure the
indexer against that latency. numpy comes with lancedb (and with torch in bench-quality's venv).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import math
import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

_WORD = re.compile(r"\w+")


def count_tokens(text: str) -> int:
    """This endpoint's own token count: about four bytes a token, as OpenAI's tokenizer gives for English."""
    return max(1, math.ceil(len(text.encode("utf-8")) / 4))


def _words(text: str) -> list[str] | list[bytes]:
    """`text`'s words, lower-cased: `\\w+` runs, as bytes for an ASCII text (split without the regex, in a
    quarter of the time; on ASCII, `\\w` is exactly `[a-z0-9_]` after lowering)."""
    if text.isascii():
        return text.encode("ascii").lower().translate(_ASCII_WORD_BYTES).split()
    return _WORD.findall(text.lower())


_ASCII_WORD_BYTES = bytes(c if c in b"abcdefghijklmnopqrstuvwxyz0123456789_" else 32 for c in range(256))


class _Slots(dict[str | bytes, int]):
    """word -> its signed slot, ±(position + 1), hashed on first sight. Concurrent misses just hash twice."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.width = width

    def __missing__(self, word: str | bytes) -> int:
        data = word if isinstance(word, bytes) else word.encode("utf-8")
        h = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
        code = (h % self.width + 1) * (1 if (h >> 40) & 1 else -1)
        self[word] = code
        return code


_SLOTS: dict[int, _Slots] = {}


def hashed_vectors(texts: Sequence[str], width: int) -> NDArray[np.float64]:
    """The vectors this endpoint answers for `texts`, one row each: same text, same vector; shared words,
    nearby vectors."""
    slots = _SLOTS.get(width) or _SLOTS.setdefault(width, _Slots(width))
    words = [_words(text) for text in texts]
    counts = np.fromiter(map(len, words), np.int64, len(texts))
    # map() over a dict's __getitem__ stays in C but for unseen words (__missing__).
    codes = np.fromiter(map(slots.__getitem__, itertools.chain.from_iterable(words)), np.int64, int(counts.sum()))
    rows = np.repeat(np.arange(len(texts)), counts)
    cells = np.bincount(rows * width + np.abs(codes) - 1, weights=np.sign(codes), minlength=len(texts) * width)
    vectors = cells.astype(np.float64, copy=False).reshape(len(texts), width)  # int64 when there are no words
    whole = [int.from_bytes(hashlib.sha256(t.encode("utf-8")).digest()[:8], "little") % width for t in texts]
    vectors[np.arange(len(texts)), whole] += 0.5
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    norms[norms == 0] = 1.0
    return vectors / norms[:, None]


def hashed_vector(text: str, width: int) -> list[float]:
    """The vector this endpoint answers for `text`."""
    return list(hashed_vectors([text], width)[0].tolist())


def encode_base64(vectors: NDArray[np.floating]) -> list[str]:
    """Each row in OpenAI's base64 form: little-endian float32."""
    packed = np.ascontiguousarray(vectors, dtype="<f4")
    return [base64.b64encode(row.tobytes()).decode("ascii") for row in packed]
