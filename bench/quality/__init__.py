"""Retrieval quality on labelled sets: `python -m bench.quality` (scripts/bench-quality) and the grids that chose
the ranking's constants (`python -m bench.quality.grid`, `.fusion_grid`, `.evidence_grid`, `.cjk_tokenizers`)."""
