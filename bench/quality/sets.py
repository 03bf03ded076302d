"""The labelled sets of bench-quality, each a JSON file of {query, relevant} over one corpus.

- `postgresql`: 60 questions of our own over Debian's PostgreSQL 15 manual (`queries.json`).
- `python`: topics from the general index of Debian's Python 3.11 manual, the entries its authors wrote
  (`.. index::` and glossary terms: `generic function`, `statement try`, `PEP 343`), a fixed-seed sample.
- `python-api`: the same index's object entries (`abspath module os.path`), a smaller sample. BM25 finds
  nearly all of them by their unique identifier (hit@10 above 0.98 before issue 13), so they guard
  against a ranking change that loses identifier lookups rather than show progress.
- `debref-ja`, `debref-zh`: section titles of Debian's reference manual in Japanese and Chinese
  (debian-reference-ja, -zh-cn); `debref-ja-body`, `debref-zh-body`: 2 or 3 content words of each
  section's first paragraph (`debref.py`). They declare `language: cjk`, which bench-quality passes
  to `lancelot-index --language` where that side's indexer has the option.
The Python and CJK sets are built here from the HTML on every run (`genindex.py`, `debref.py`) and
written under the work folder, not committed: the same package gives the same set.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

from bench import common
from bench.quality import debref, genindex

HERE = Path(__file__).resolve().parent
PYTHON = {
    "package": "python3.11-doc",
    "docs": str(common.PYTHON_MANUAL),
    # What README advised for a Sphinx build before builds were recognised (issue 27): each page once (not its
    # _sources copy), no general index. Kept, so that every side, old code or new, reads the same pages;
    # `--variant` indexes without them.
    "exclude": ["_sources", "genindex*.html", "_static"],
}
NAMES = ("postgresql", "python", "python-api", *debref.SETS)
SIZE, SEED = 400, 13  # bench-quality's defaults: queries sampled from the Python index, and the seed


def indexed_pages(docs: Path, exclude: list[str]) -> set[str]:
    """HTML pages under `docs` that `lancelot-index --exclude ...` reads, as paths under `docs`."""
    pages = set()
    for path in docs.rglob("*.htm*"):
        relative = path.relative_to(docs)
        if not any(fnmatch.fnmatch(part, glob) for part in relative.parts for glob in exclude):
            pages.add(relative.as_posix())
    return pages


def _python(names: list[str], work: Path, size: int, seed: int) -> dict[str, dict[str, Any]]:
    docs = Path(PYTHON["docs"])
    items, fates = genindex.entries(docs, indexed_pages(docs, PYTHON["exclude"]))
    print(f"Python's general index: {sum(fates.values())} entry lines; {dict(fates)}")
    built = {}
    for name, kind, count in (("python", "topic", size), ("python-api", "api", size // 2)):
        if name not in names:
            continue
        pool = [item for item in items if item.kind == kind]
        chosen = genindex.sample(pool, count, seed)
        about = (
            f"{count} of the {len(pool)} usable {kind} entries of the general index of Debian's "
            f"{PYTHON['package']}, sampled with seed {seed} in proportion to each index letter; built by "
            "bench/quality/genindex.py"
        )
        spec = {"about": about, **PYTHON, "queries": [vars(item) for item in chosen]}
        path = work / f"sets/{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
        print(f"{name}: {about} ({path}); for example")
        for item in chosen[:: max(1, len(chosen) // 5)]:
            print(f"  {item.query!r} -> {', '.join(item.relevant)}   (index: {item.entry})")
        built[name] = {**spec, "file": str(path)}
    return built


def _write(name: str, spec: dict[str, Any], work: Path) -> dict[str, Any]:
    path = work / f"sets/{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    queries = spec["queries"]
    print(f"{name}: {spec['about']} ({path}); for example")
    for item in queries[:: max(1, len(queries) // 5)]:
        print(f"  {item['query']!r} -> {', '.join(item['relevant'])}   (section {item['section']})")
    return {**spec, "file": str(path)}


def load(names: list[str], work: Path, size: int, seed: int) -> dict[str, dict[str, Any]]:
    """The named sets, in the order given: each with package, docs, exclude, queries and its file."""
    unknown = set(names) - set(NAMES)
    if unknown:
        raise SystemExit(f"unknown set(s) {', '.join(sorted(unknown))}; the sets are {', '.join(NAMES)}")
    built = _python(names, work, size, seed) if {"python", "python-api"} & set(names) else {}
    for name in [name for name in names if name in debref.SETS]:
        built[name] = _write(name, debref.build(name, work, seed), work)
    if "postgresql" in names:
        spec = json.loads((HERE / "queries.json").read_text(encoding="utf-8"))
        built["postgresql"] = {**spec, "exclude": [], "file": str(HERE / "queries.json")}
    return {name: built[name] for name in names}
