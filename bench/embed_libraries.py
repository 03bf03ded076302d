"""ONNX Runtime + tokenizers directly against fastembed, for `--embed local`: install, import, throughput, query.

Run by `scripts/bench-embed-libraries`. Each library in a throwaway venv of its own (`bench-work/embed-libraries/`),
the same model folder (all-MiniLM-L6-v2 int8, tests/support/local_model.py), mean pooling and normalisation on
both. Per side, alternated over `--rounds`: the import's wall time, passages per CPU second over 256 passages
of 150 words in batches of 32, and the CPU time of 50 single queries on one thread (CPU times, not wall times:
they hold on a machine shared with other work). Prints a Markdown table for docs/decisions.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

from bench import common

WORK = common.WORK / "embed-libraries"
SIDES = {
    "onnxruntime + tokenizers": (("onnxruntime", "tokenizers", "numpy"), "onnxruntime, tokenizers"),
    "fastembed": (("fastembed",), "fastembed"),
}
# What fastembed reads beside the two files (the model's own, abridged to what it uses).
FASTEMBED_FILES = {
    "config.json": {"model_type": "bert", "hidden_size": 384, "max_position_embeddings": 512, "pad_token_id": 0},
    "tokenizer_config.json": {"do_lower_case": True, "model_max_length": 512, "pad_token": "[PAD]"},
    "special_tokens_map.json": {
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    },
}
PROBE = r"""
import json, random, sys, time
folder, side = sys.argv[1], sys.argv[2]
started = time.perf_counter()
if side == "fastembed":
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType
else:
    import numpy as np, onnxruntime as ort
    from tokenizers import Tokenizer
imported = time.perf_counter() - started
if side == "fastembed":
    TextEmbedding.add_custom_model(model="local/minilm", pooling=PoolingType.MEAN, normalization=True,
                                   sources=ModelSource(hf="local/minilm"), dim=384, model_file="model.onnx")
    model = TextEmbedding("local/minilm", specific_model_path=folder, threads=1)
    passages = lambda texts: list(model.embed(texts, batch_size=32))
    query = lambda text: list(model.query_embed(text))
else:
    tok = Tokenizer.from_file(folder + "/tokenizer.json"); tok.enable_truncation(256); tok.enable_padding()
    options = ort.SessionOptions(); options.intra_op_num_threads = 1
    session = ort.InferenceSession(folder + "/model.onnx", sess_options=options)
    def run(texts):
        encoded = tok.encode_batch(texts)
        ids = np.array([e.ids for e in encoded]); mask = np.array([e.attention_mask for e in encoded])
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    passages = lambda texts: [run(texts[at:at + 32]) for at in range(0, len(texts), 32)]
    query = lambda text: run([text])
words = "the server reads tables through lance and answers queries from assistants with passages".split()
rng = random.Random(1)
texts = [" ".join(rng.choice(words) for _ in range(150)) for _ in range(256)]
query("warm up")
cpu = time.process_time(); passages(texts); per_cpu = len(texts) / (time.process_time() - cpu)
queries = []
for number in range(50):
    cpu = time.process_time(); query(f"how do I search my notes without a key {number}")
    queries.append(time.process_time() - cpu)
print(json.dumps({"import": imported, "per_cpu": per_cpu, "query_cpu": sorted(queries)}))
"""


def size(venv: Path) -> tuple[int, int]:
    """MB of the venv's site-packages, and the distributions in it."""
    site = next(venv.glob("lib/python*/site-packages"))
    total = sum(path.stat().st_size for path in site.rglob("*") if path.is_file())
    return round(total / 1e6), len(list(site.glob("*.dist-info")))


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench-embed-libraries", description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from tests.support.local_model import make_model_folder

    folder = make_model_folder(WORK / "model")
    for name, content in FASTEMBED_FILES.items():
        (folder / name).write_text(json.dumps(content), encoding="utf-8")
    pythons = {
        name: common.throwaway_venv(WORK / name.split()[0], need, probe) for name, (need, probe) in SIDES.items()
    }
    results: dict[str, list[dict]] = {name: [] for name in SIDES}
    loads = []
    for number in range(args.rounds):
        loads.append(common.load_average())
        for name in list(SIDES)[:: 1 if number % 2 == 0 else -1]:
            side = "fastembed" if name == "fastembed" else "direct"
            env = common.settings_free_env(HF_HUB_OFFLINE="1")
            done = subprocess.run(
                [str(pythons[name]), "-c", PROBE, str(folder), side],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            results[name].append(json.loads(done.stdout.splitlines()[-1]))
    print(f"Load {min(loads)}–{max(loads)}; best of {args.rounds} alternated rounds.\n")
    print(common.table_head(["", "install", "packages", "import", "passages per CPU second", "query CPU, median"]))
    for name, runs in results.items():
        megabytes, packages = size(pythons[name].parent.parent)
        imported = min(run["import"] for run in runs)
        per_cpu = max(run["per_cpu"] for run in runs)
        query = min(statistics.median(run["query_cpu"]) for run in runs) * 1000
        cells = [f"{megabytes} MB", packages, f"{imported:.1f} s", f"{per_cpu:.1f}", f"{query:.1f} ms"]
        print(common.table_row([name, *cells]))


if __name__ == "__main__":
    main()
