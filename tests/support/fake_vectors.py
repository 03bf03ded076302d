"""The fake endpoint's vectors: deterministic, derived from the text, close for texts that share words."""

from __future__ import annotations

import base64
import functools
import hashlib
import math
import re
import sys
from array import array
from collections.abc import Sequence

_WORD = re.compile(r"\w+")


def count_tokens(text: str) -> int:
    """This endpoint's own token count: about four bytes a token, as OpenAI's tokenizer gives for English."""
    return max(1, math.ceil(len(text.encode("utf-8")) / 4))


@functools.lru_cache(maxsize=200_000)
def _slot(word: str, width: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
    return h % width, 1.0 if (h >> 40) & 1 else -1.0


def hashed_vector(text: str, width: int) -> list[float]:
    """The vector this endpoint answers for `text`: same text, same vector; shared words, nearby vectors."""
    vector = [0.0] * width
    for word in _WORD.findall(text.lower()):
        position, sign = _slot(word, width)
        vector[position] += sign
    whole = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector[whole % width] += 0.5
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def encode_base64(vector: Sequence[float]) -> str:
    """OpenAI's base64 form: little-endian float32."""
    packed = array("f", vector)
    if sys.byteorder != "little":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")
