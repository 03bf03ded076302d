"""Peak memory of `lancelot-index` over hostile and genuine files, and what one file takes to read.

Builds, under bench-work/file-memory, three folders each beside an ok.md: a PDF of 1 MB whose page inflates to
1,000 MB of zeros; a Word file of 0.3 MB holding a million one-letter headings; and genuine large files (a
3,000-page PDF of text, a Word file of 30,000 paragraphs, 50 MB of plain text). Runs an indexer over each in
turn, sampling the memory of its whole process tree every 20 ms (the sum of PSS, and the largest RSS), and
prints the peaks, the seconds and the summary's skipped files. With --need, it reads each genuine file in this
process instead (`read_document`, no limit) and prints the growth of its peak resident size. Linux only (/proc).

    .venv/bin/python -m bench.file_memory [--index PATH_TO_LANCELOT_INDEX] [--folders genuine] [-- OPTIONS...]
    .venv/bin/python -m bench.file_memory --need

--index compares another commit's indexer (`WORKTREE/.venv/bin/lancelot-index`) on the same folders.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.support.documents import Line, docx_with_body, make_pdf, zeros_pdf

from bench import common

WORK = common.WORK / "file-memory"
HEADING = b'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>%s</w:t></w:r></w:p>'
PARAGRAPH = b"<w:p><w:r><w:t>%s</w:t></w:r></w:p>"


def _sentence(rng: random.Random, words: int = 12) -> str:
    return " ".join(f"w{rng.randrange(20_000)}" for _ in range(words)).capitalize() + "."


def build() -> dict[str, Path]:
    """The folders, built once (kept under bench-work)."""
    folders = {name: WORK / name for name in ("pdf-bomb", "docx-bomb", "genuine")}
    if all(folder.is_dir() for folder in folders.values()):
        return folders
    shutil.rmtree(WORK, ignore_errors=True)
    for folder in folders.values():
        folder.mkdir(parents=True)
        (folder / "ok.md").write_text("# Fine\n\nThis page is read.\n", encoding="utf-8")
    (folders["pdf-bomb"] / "inflating.pdf").write_bytes(zeros_pdf(megabytes=1000))
    (folders["docx-bomb"] / "headings.docx").write_bytes(docx_with_body(HEADING % b"h" * 1_000_000))
    rng = random.Random(1)
    genuine = folders["genuine"]
    pages = [[Line(_sentence(rng, 14)[:95], 10, 740 - 15 * n) for n in range(45)] for _ in range(3000)]
    (genuine / "book.pdf").write_bytes(make_pdf(pages))
    body = b"".join(
        (HEADING % _sentence(rng, 5).encode() if n % 10 == 0 else b"")
        + PARAGRAPH % f"{_sentence(rng)} {_sentence(rng)}".encode()
        for n in range(30_000)
    )
    (genuine / "report.docx").write_bytes(docx_with_body(body))
    paragraphs = [" ".join(_sentence(rng) for _ in range(5)) for _ in range(2000)]
    with (genuine / "log.txt").open("w", encoding="utf-8") as out:
        written = 0
        while written < 50 << 20:
            paragraph = rng.choice(paragraphs) + "\n\n"
            out.write(paragraph)
            written += len(paragraph)
    return folders


def _pss(pid: int) -> int:
    """The process's proportional share of the memory it shares, plus its own, in bytes; 0 once gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text(encoding="utf-8").splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run(indexer: str, docs: Path, options: list[str]) -> None:
    db = WORK / "db"
    shutil.rmtree(db, ignore_errors=True)
    started = time.perf_counter()
    process = subprocess.Popen(
        [indexer, *options, str(docs), str(db)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    total = largest = 0
    while process.poll() is None:
        pids = common.process_tree(process.pid)
        total = max(total, sum(_pss(pid) for pid in pids))
        largest = max(largest, max(common.resident_bytes(pid) for pid in pids))
        time.sleep(0.02)
    out = process.stdout.read() if process.stdout is not None else ""
    seconds = time.perf_counter() - started
    print(
        f"{docs.name}: exit {process.returncode} in {seconds:.1f} s; peak PSS of the tree {total >> 20} MB, "
        f"largest RSS {largest >> 20} MB"
    )
    for line in out.splitlines():
        if line.startswith(("Indexed ", "  ")):
            print(f"  {line.strip()}")


def need(path: Path) -> None:
    """What reading `path` takes in this process (a fresh one per file: freed memory is reused, not returned)."""
    from lancelot_indexer.documents.collect import read_document
    from lancelot_indexer.documents.walk import Found
    from lancelot_indexer.readers import markdown, pdf, plain, word  # noqa: F401  (imported before measuring)

    before = common.resident_bytes(os.getpid())
    Path("/proc/self/clear_refs").write_text("5")  # the peak resident size := the current one
    outcome = read_document(Found(path, path.name), 1200)
    grown = common.resident_bytes(os.getpid(), "VmHWM") - before
    passages = len(outcome[2]) if not isinstance(outcome, str) else outcome
    print(f"{path.name}: {path.stat().st_size >> 20} MB, {passages} passages, peak +{grown >> 20} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", default=str(common.BIN / "lancelot-index"))
    parser.add_argument(
        "--need", nargs="?", const="", metavar="FILE", help="what reading each genuine file (or FILE) takes, alone"
    )
    parser.add_argument("--folders", default="pdf-bomb,docx-bomb,genuine", help="which, comma-separated")
    parser.add_argument("options", nargs="*", help="options for the indexer, after --")
    arguments = parser.parse_args()
    if arguments.need:  # one file, in a process of its own
        need(Path(arguments.need))
        return
    folders = build()
    print(f"load {common.load_average()} on {os.cpu_count()} cores")
    if arguments.need == "":
        for path in sorted(folders["genuine"].iterdir()):
            if path.name != "ok.md":
                subprocess.run(
                    [sys.executable, "-m", "bench.file_memory", "--need", str(path)], cwd=common.ROOT, check=True
                )
        return
    for name in arguments.folders.split(","):
        run(arguments.index, folders[name], arguments.options)


if __name__ == "__main__":
    main()
