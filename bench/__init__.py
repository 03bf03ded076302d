"""Lancelot's benchmarks: each module is one measurement, run from the repository root with the dev venv.

    .venv/bin/python -m bench.search --help

`common` holds what they share (where things are, the corpora and their indexing, servers, processes, timing,
Markdown tables). The `scripts/bench-*` launchers set the venv up and run these modules, which install the Debian
manuals they read with apt-get when missing; docs/benchmarks.md holds their figures. `quality/` scores retrieval
on labelled sets. Work folders live under bench-work/ (ignored by git). Not part of any distribution, and not run
by the test suite.
"""
