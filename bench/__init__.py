"""Lancelot's benchmarks: each module is one measurement, run from the repository root with the dev venv.

    .venv/bin/python -m bench.search --help

The `scripts/bench-*` launchers install what a benchmark reads (Debian's manuals) and run these modules;
docs/benchmarks.md holds their figures. `quality/` scores retrieval on labelled sets. Work folders live under
bench-work/ (ignored by git). Not part of any distribution, and not run by the test suite.
"""
