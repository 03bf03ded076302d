"""`scripts/bench-index`: the whole `lancelot-index` run over Debian's PostgreSQL 15 HTML manual against a reference
that only strips the same pages with BeautifulSoup's html.parser and get_text(), and against Lance alone doing the
same work with none of Lancelot's code (bench/index_floor.py), the floor no pipeline on Lance can go under; then the
best ratio that floor allows. The other parts are bench/index_incremental.py's.

    scripts/bench-index [ROUNDS] [PART ...]   (ROUNDS default 3; PART: speed incremental noop memory fts ray
                                              ray-fts ray-parts; default all but fts and the ray ones, speed last)

`ray`: copies of the manual holding at least 100,000 passages, indexed with --ray (a Ray started on this
machine, one CPU a core) against the local indexer, alternating round by round, the best round of each; and
what starting and ending a Ray costs here, the overhead a run on a cluster that is already up does not pay.
`ray-fts`: lance-ray's distributed full-text index build against Lance's one-core one; `ray-parts`: the parts of
a --ray run (read, embed, write, index) timed one by one (bench/index_ray.py).

For speed, lancelot-index and Lance alone alternate round by round, so that a change of load hits both, and the
best round of each side counts, as the reference's best round does. beautifulsoup4 lives in a throwaway venv
(bench-work/index/bs4), never in Lancelot's dependencies.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess

from bench import common, index_floor, index_incremental, index_ray

WORK = common.WORK / "index"
DOCS = common.POSTGRES_MANUAL
PARTS = ("speed", *index_incremental.PARTS, "ray", "ray-fts", "ray-parts")
RAY_PASSAGES = 100_000
# Run in a fresh interpreter: the seconds Ray takes to start on this machine and to shut down again.
RAY_START = r"""
import json, sys, time
import ray
started = time.perf_counter()
ray.init(address="local", include_dashboard=False, log_to_driver=False)
ray.shutdown()
print(json.dumps({"seconds": time.perf_counter() - started, "version": ray.__version__}))
"""
DEFAULT_PARTS = ("speed", "incremental", "noop", "memory")

# Run by the reference's venv: the best of ROUNDS passes of BeautifulSoup over every page of DOCS.
REFERENCE = r"""
import json, sys, time
from pathlib import Path
import bs4
from bs4 import BeautifulSoup
docs, rounds = Path(sys.argv[1]), int(sys.argv[2])
pages = sorted(path for path in docs.rglob("*") if path.suffix.lower() in (".html", ".htm"))
best = float("inf")
for _ in range(rounds):
    started = time.perf_counter()
    for path in pages:
        BeautifulSoup(path.read_text(encoding="utf-8", errors="replace"), "html.parser").get_text()
    best = min(best, time.perf_counter() - started)
print(json.dumps({"seconds": best, "version": bs4.__version__}))
"""


def speed(rounds: int) -> None:
    pages = sorted(path for path in DOCS.rglob("*") if path.suffix.lower() in (".html", ".htm"))
    megabytes = sum(path.stat().st_size for path in pages) / 1e6
    db = WORK / "db"
    ours, floors = [], []
    for _ in range(rounds):
        shutil.rmtree(db, ignore_errors=True)
        ours.append(common.index(DOCS, db, "--quiet")[0])
        floors.append(index_floor.lance_alone(str(db), 1))
    floor = min(floors, key=lambda parts: parts["total"])
    best = min(ours)
    bs4 = common.throwaway_venv(WORK / "bs4", ["beautifulsoup4==4.*"], "bs4")
    run = [str(bs4), "-c", REFERENCE, str(DOCS), str(rounds)]
    reference = json.loads(subprocess.run(run, capture_output=True, text=True, check=True).stdout)
    theirs = reference["seconds"]
    print(f"pages: {len(pages)} HTML files, {megabytes:.1f} MB ({DOCS})")
    whole = "lancelot-index, whole run (walk, strip, chunk, write, FTS index)"
    print(f"{whole}: {best:.2f} s, {megabytes / best:.1f} MB/s")
    print(
        f"reference, BeautifulSoup {reference['version']} html.parser + get_text() only: {theirs:.2f} s, "
        f"{megabytes / theirs:.2f} MB/s"
    )
    print(f"ratio: lancelot-index is {theirs / best:.1f}x faster (target: at least 8x)")
    print(
        f"Lance alone, same rows, no parsing: interpreter start and exit {floor['process']:.2f} s + import "
        f"{floor['import']:.2f} s + write {floor['write']:.2f} s + FTS build {floor['fts']:.2f} s = "
        f"{floor['total']:.2f} s; best ratio any pipeline on Lance can reach here: {theirs / floor['total']:.1f}x"
    )
    print(f"lancelot-index / Lance alone: {best / floor['total']:.2f}x (target: at most 1.3x)")


def on_ray(rounds: int) -> None:
    docs = common.copies_for(RAY_PASSAGES, {"": DOCS}, WORK / "ray-docs")
    local_db, ray_db = WORK / "ray-local-db", WORK / "ray-db"
    local, distributed = [], []
    for _ in range(rounds):
        for db, times, options in ((local_db, local, ()), (ray_db, distributed, ("--ray",))):
            shutil.rmtree(db, ignore_errors=True)
            times.append(common.index(docs, db, "--quiet", *options)[0])
    start = json.loads(
        subprocess.run(
            [str(common.BIN / "python"), "-c", RAY_START], capture_output=True, text=True, check=True
        ).stdout.splitlines()[-1]
    )
    passages, best, theirs = common.rows(ray_db), min(distributed), min(local)
    assert passages == common.rows(local_db)
    print(f"--ray: {passages:,} passages ({docs}), Ray {start['version']} on this machine")
    print(f"lancelot-index, local worker processes: {theirs:.2f} s")
    print(f"lancelot-index --ray, a Ray started by the run: {best:.2f} s ({best / theirs:.2f}x the local run)")
    print(
        f"of which starting and ending Ray alone: {start['seconds']:.2f} s; "
        f"without it {(best - start['seconds']) / theirs:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-index", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("words", nargs="*", metavar="[ROUNDS] [PART ...]")
    words = parser.parse_args().words
    common.installed(DOCS)
    rounds = int(words.pop(0)) if words and words[0].isdigit() else 3
    parts = words or list(DEFAULT_PARTS)
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {', '.join(unknown)}: the parts are {', '.join(PARTS)}, after ROUNDS")
    WORK.mkdir(parents=True, exist_ok=True)
    for part in parts:
        if part == "ray":
            print()
            on_ray(rounds)
        elif part == "ray-fts":
            print()
            index_ray.fts(rounds)
        elif part == "ray-parts":
            print()
            index_ray.ray_parts(rounds)
        elif part != "speed":
            print()
            index_incremental.PARTS[part](rounds)
    if "speed" in parts:
        print()
        speed(rounds)


if __name__ == "__main__":
    main()
