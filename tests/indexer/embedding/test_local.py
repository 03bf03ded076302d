"""`--embed local`: a real all-MiniLM-L6-v2 (int8 ONNX) run on CPU, loaded once for the module's direct tests,
and the real command over a few documents."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import lancedb
import pytest

from lancelot_indexer.embedding.local import LocalModel
from lancelot_schema import layout
from lancelot_schema.local_models import Where

BIN = Path(sys.executable).parent
DOCS = {
    "car.md": "# Tyres\n\nCheck the tyre pressure every month; under-inflated tyres wear out quickly.\n",
    "bread.md": "# Bread\n\nKnead the dough for ten minutes, let it rise for an hour, then bake it.\n",
}


@pytest.fixture(scope="module")
def model(local_model: Path) -> LocalModel:
    return LocalModel.load(str(local_model), Where(), threads=2, say=lambda line: None)


def cosine(left: list[float], right: list[float]) -> float:
    return sum(a * b for a, b in zip(left, right, strict=True))


def test_vectors_are_unit_length_and_near_for_sentences_of_like_meaning(model):
    # The sentences of sentence-transformers' own semantic-search example for this model.
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."]
    embedded = model.embed(texts)
    assert (embedded.width, embedded.model, embedded.host) == (384, "local:all-MiniLM-L6-v2", "local")
    food, bread, horse = (embedded[at] for at in range(3))
    assert all(math.isclose(cosine(vector, vector), 1.0, rel_tol=1e-5) for vector in (food, bread, horse))
    assert cosine(food, bread) == pytest.approx(0.753, abs=0.01)
    assert cosine(food, horse) < 0.3 and cosine(bread, horse) < 0.3


def test_a_text_longer_than_the_model_reads_is_embedded_whole_in_windows(model):
    head = "Tyres wear out when their pressure is low. " * 40  # about 360 tokens: past the 256 the model reads
    tail = "Bread dough rises in a warm kitchen. " * 40
    whole, first, second = (model.embed([text]) for text in (head + tail, head, tail))
    assert whole.stats.split_texts == 1 and first.stats.split_texts == 1
    # The end of the text counts: the whole lies between its halves, not on the first one.
    assert cosine(whole[0], second[0]) > 0.5 and cosine(whole[0], first[0]) > 0.5
    assert cosine(whole[0], first[0]) < 0.99


def test_embed_local_stamps_the_model_and_a_rebuild_reuses_every_vector(local_model, tmp_path, clean_env):
    docs, db = tmp_path / "docs", tmp_path / "db"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    command = [BIN / "lancelot-index", docs, db, "--embed", f"local:{local_model}", "--embed-threads", "2"]
    first = subprocess.run(command, env=clean_env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "Vectors: 2 passages embedded with local:all-MiniLM-L6-v2 on this machine (1 model run)" in first.stdout
    table = lancedb.connect(db).open_table(layout.DEFAULT_TABLE)
    stamped = layout.decode_metadata(table.schema.metadata)
    assert (stamped["embedding_model"], stamped["vector_width"], stamped["embedding_host"]) == (
        "local:all-MiniLM-L6-v2",
        "384",
        "local",
    )
    # The same model found through LANCELOT_EMBED_MODEL_PATH: the same stamp, so every vector is reused.
    again = subprocess.run(
        [BIN / "lancelot-index", docs, db, "--embed", "local"],
        env=clean_env | {"LANCELOT_EMBED_MODEL_PATH": str(local_model)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert "Vectors: 0 passages embedded with local:all-MiniLM-L6-v2 on this machine (0 model runs), 2 reused" in (
        again.stdout
    )


def test_offline_with_no_model_one_line_names_the_three_ways(small_docs, tmp_path, clean_env, closed_url):
    env = clean_env | {"XDG_CACHE_HOME": str(tmp_path / "cache"), "LANCELOT_EMBED_MODEL_URL": closed_url}
    done = subprocess.run(
        [BIN / "lancelot-index", small_docs, tmp_path / "db", "--embed", "local"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith(
        f"Error: the local model all-MiniLM-L6-v2 is not on this machine and could not be downloaded from {closed_url}"
    )
    cache = tmp_path / "cache" / "lancelot" / "models" / "all-MiniLM-L6-v2"
    assert error.endswith(
        f"give its folder (--embed local:FOLDER or LANCELOT_EMBED_MODEL_PATH), put it in {cache}, or let the download "
        "reach it (LANCELOT_EMBED_MODEL_URL names a mirror)"
    )
    assert "Traceback" not in done.stderr and not (tmp_path / "db").exists()


def test_without_the_extra_the_error_gives_the_install_command(small_docs, tmp_path, clean_env, local_model):
    # onnxruntime made unimportable, as in an installation without the 'local' extra.
    code = "import sys; sys.modules['onnxruntime'] = None; from lancelot_indexer.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, str(small_docs), str(tmp_path / "db"), "--embed", f"local:{local_model}"],
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("Error: --embed local needs the optional 'local' extra: ")
    assert "--extras local" in done.stderr or "pip install 'lancelot-indexer[local]'" in done.stderr


def test_threads_are_refused_without_a_local_model(small_docs, tmp_path, clean_env):
    done = subprocess.run(
        [BIN / "lancelot-index", small_docs, tmp_path / "db", "--embed", "--embed-threads", "2"],
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--embed-threads is for --embed local" in done.stderr
    assert not (tmp_path / "db").exists()


def test_embed_before_docs_is_told_to_go_after_them(small_docs, tmp_path, clean_env):
    done = subprocess.run(
        [BIN / "lancelot-index", "--embed", small_docs, tmp_path / "db"],
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "takes local or local:MODEL, or no value for the endpoint" in done.stderr
    assert "give --embed after DOCS and DB" in done.stderr
