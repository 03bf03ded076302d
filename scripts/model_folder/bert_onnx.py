"""A BERT encoder as an ONNX graph, from its weights as numpy arrays: what `lancelot_*.embedding` runs.

    Bert(word=..., position=..., token_type=..., norm=(w, b), layers=[Layer(...), ...], heads=12, eps=1e-12)
    save(bert, path)       # model.onnx: input_ids, attention_mask, token_type_ids -> last_hidden_state

Written out by hand (opset 17) so that a model folder needs numpy and onnx, not torch: the models Lancelot
makes folders of (all-MiniLM-L6-v2, multilingual-e5-small) are plain BERT encoders (post-norm, GELU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
Array = np.ndarray


@dataclass(frozen=True)
class Layer:
    """One encoder layer; each weight is (out, in), as torch's Linear stores it."""

    query: tuple[Array, Array]
    key: tuple[Array, Array]
    value: tuple[Array, Array]
    attention_out: tuple[Array, Array]
    attention_norm: tuple[Array, Array]
    intermediate: tuple[Array, Array]
    output: tuple[Array, Array]
    output_norm: tuple[Array, Array]


@dataclass(frozen=True)
class Bert:
    word: Array  # (vocabulary, hidden)
    position: Array  # (max positions, hidden)
    token_type: Array  # (types, hidden)
    norm: tuple[Array, Array]
    layers: list[Layer]
    heads: int
    eps: float


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []
        self.count = 0

    def weight(self, name: str, value: Array) -> str:
        dtype = np.int64 if value.dtype.kind in "iu" else np.float32
        self.weights.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=dtype), name))
        return name

    def op(self, kind: str, *inputs: str, **attributes: object) -> str:
        self.count += 1
        out = f"{kind.lower()}_{self.count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attributes))
        return out

    def linear(self, x: str, name: str, weight: tuple[Array, Array]) -> str:
        matrix = self.weight(f"{name}.weight", weight[0].T)  # x @ W.T: MatMul wants (in, out)
        return self.op("Add", self.op("MatMul", x, matrix), self.weight(f"{name}.bias", weight[1]))

    def heads(self, x: str, name: str, weight: tuple[Array, Array], split: str, perm: list[int]) -> str:
        """A projection of `x` split into (batch, heads, tokens, size), in the order `perm` gives."""
        return self.op("Transpose", self.op("Reshape", self.linear(x, name, weight), split), perm=perm)

    def norm(self, x: str, name: str, weight: tuple[Array, Array], eps: float) -> str:
        scale, bias = self.weight(f"{name}.weight", weight[0]), self.weight(f"{name}.bias", weight[1])
        return self.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def graph(bert: Bert) -> onnx.ModelProto:
    """The encoder as an ONNX model."""
    g = _Graph()
    hidden = bert.word.shape[1]
    size = hidden // bert.heads
    word = g.op("Gather", g.weight("embeddings.word", bert.word), "input_ids")
    # The first `tokens` rows of the position table: a Slice, which ONNX Runtime's optimiser leaves alone.
    length = g.op("Shape", "input_ids", start=1, end=2)
    start = g.weight("zero", np.array([0]))
    position = g.op("Slice", g.weight("embeddings.position", bert.position), start, length, start)
    kind = g.op("Gather", g.weight("embeddings.token_type", bert.token_type), "token_type_ids")
    x = g.norm(g.op("Add", g.op("Add", word, position), kind), "embeddings.norm", bert.norm, bert.eps)
    # Padding never attends: a large negative score before the softmax, (batch, 1, 1, tokens).
    keep = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    drop = g.op("Mul", g.op("Sub", g.weight("1.0", np.array(1.0)), keep), g.weight("-1e4", np.array(-10000.0)))
    bias = g.op("Unsqueeze", drop, g.weight("axes", np.array([1, 2])))
    split = g.weight("heads", np.array([0, 0, bert.heads, size]))
    joined = g.weight("joined", np.array([0, 0, hidden]))
    scale = g.weight("scale", np.array(1.0 / math.sqrt(size)))
    half, root = g.weight("0.5", np.array(0.5)), g.weight("sqrt2", np.array(math.sqrt(2.0)))
    for number, layer in enumerate(bert.layers):
        name = f"layer{number}"

        query = g.heads(x, f"{name}.query", layer.query, split, [0, 2, 1, 3])
        key = g.heads(x, f"{name}.key", layer.key, split, [0, 2, 3, 1])  # transposed for query @ key
        value = g.heads(x, f"{name}.value", layer.value, split, [0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", query, key), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), joined)
        attended = g.linear(context, f"{name}.attention_out", layer.attention_out)
        x = g.norm(g.op("Add", x, attended), f"{name}.attention_norm", layer.attention_norm, bert.eps)
        inner = g.linear(x, f"{name}.intermediate", layer.intermediate)
        gelu = g.op("Mul", g.op("Mul", inner, half), g.op("Add", "1.0", g.op("Erf", g.op("Div", inner, root))))
        out = g.linear(gelu, f"{name}.output", layer.output)
        x = g.norm(g.op("Add", x, out), f"{name}.output_norm", layer.output_norm, bert.eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    ids = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", hidden])
    made = helper.make_graph(g.nodes, "bert", ids, [out], initializer=g.weights)
    model = helper.make_model(made, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="lancelot")
    model.ir_version = 8  # readable by every ONNX Runtime the 'local' extra allows
    onnx.checker.check_model(model, full_check=True)
    return model


def save(bert: Bert, path: Path) -> None:
    onnx.save_model(graph(bert), str(path))
