"""scripts/model_folder: the ONNX encoder it writes, run by ONNX Runtime, against the same encoder in numpy."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"


@pytest.fixture
def model_folder(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from model_folder import bert_onnx, sources

    return bert_onnx, sources


def _tiny(bert_onnx, rng):
    hidden, inner = 16, 32

    def pair(out, into):
        return rng.normal(0, 0.3, (out, into)).astype(np.float32), rng.normal(0, 0.1, out).astype(np.float32)

    def norm():
        return (1 + rng.normal(0, 0.1, hidden)).astype(np.float32), rng.normal(0, 0.1, hidden).astype(np.float32)

    layers = [
        bert_onnx.Layer(
            pair(hidden, hidden),
            pair(hidden, hidden),
            pair(hidden, hidden),
            pair(hidden, hidden),
            norm(),
            pair(inner, hidden),
            pair(hidden, inner),
            norm(),
        )
        for _ in range(2)
    ]
    table = rng.normal(0, 1, (30, hidden)).astype(np.float32)
    positions, kinds = (
        rng.normal(0, 1, (12, hidden)).astype(np.float32),
        rng.normal(0, 1, (2, hidden)).astype(np.float32),
    )
    return bert_onnx.Bert(table, positions, kinds, norm(), layers, heads=4, eps=1e-12)


def _reference(bert, ids):
    """One text, no padding, in plain numpy: what the graph must compute."""

    def norm(x, weight):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + bert.eps) * weight[0] + weight[1]

    def linear(x, weight):
        return x @ weight[0].T + weight[1]

    x = norm(bert.word[ids] + bert.position[: len(ids)] + bert.token_type[0], bert.norm)
    size = x.shape[1] // bert.heads
    for layer in bert.layers:
        q, k, v = (
            linear(x, w).reshape(len(ids), bert.heads, size).transpose(1, 0, 2)
            for w in (layer.query, layer.key, layer.value)
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        context = (weights / weights.sum(-1, keepdims=True)) @ v
        x = norm(
            x + linear(context.transpose(1, 0, 2).reshape(len(ids), -1), layer.attention_out), layer.attention_norm
        )
        inner = linear(x, layer.intermediate)
        gelu = 0.5 * inner * (1 + np.vectorize(math.erf)(inner / math.sqrt(2)))
        x = norm(x + linear(gelu, layer.output), layer.output_norm)
    return x


def test_the_graph_computes_the_encoder_and_padding_changes_nothing(model_folder, tmp_path):
    import onnxruntime

    bert_onnx, _ = model_folder
    bert = _tiny(bert_onnx, np.random.default_rng(7))
    bert_onnx.save(bert, tmp_path / "model.onnx")
    session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    texts = [[0, 5, 9, 17, 2], [0, 3, 2]]
    ids = np.ones((2, 5), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, text in enumerate(texts):
        ids[row, : len(text)], mask[row, : len(text)] = text, 1
    (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    assert hidden.shape == (2, 5, 16)
    for row, text in enumerate(texts):  # the shorter text, padded, as if alone
        np.testing.assert_allclose(hidden[row, : len(text)], _reference(bert, text), atol=1e-4)


def test_q4_blocks_dequantise_low_nibbles_first_then_high(model_folder):
    _, sources = model_folder
    nibbles = bytes((low | (high << 4)) for low, high in zip(range(16), range(15, -1, -1), strict=True))
    block = np.float16(0.5).tobytes() + nibbles
    weights = sources._dequantise(block, 1, 32)
    assert weights.tolist() == [[(q - 8) * 0.5 for q in [*range(16), *range(15, -1, -1)]]]


def test_the_unigram_tokenizer_drops_controls_and_joins_spaces_as_sentencepiece_does(model_folder):
    _, sources = model_folder
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁ab", "▁a", "b", "▁", "ｂ"]
    scores = [0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -2.0, -3.0, -9.0]
    tokenizer = sources._xlmr_tokenizer(pieces, scores, 3, {"\x01": "", "\u3000": " "})
    encoding = tokenizer.encode("ab\x01\u3000  ｂ")  # NFKC makes the fullwidth b a b
    assert encoding.tokens == ["<s>", "▁ab", "▁", "b", "</s>"]
    assert encoding.ids == [0, 4, 7, 6, 2]
