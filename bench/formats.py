"""Pages per second of each reader, against a reference library in the same run, and of a whole run over a mixed folder.

    scripts/bench-formats [ROUNDS] [--parts pdf,rst,word,html,run] [--work DIR] [--reference REF_PYTHON]

ROUNDS (default 1): our side's best of ROUNDS; the references run once. The folder (made under --work):
PostgreSQL 15's HTML manual, the LaTeX base PDFs of texlive-latex-base-doc, the Python 3.11 manual's reST
sources (python3.11-doc ships them as `_sources/*.rst.txt`; copied as `.rst`) and Word files made here with
python-docx from 200 of the PostgreSQL pages (their headings and paragraphs).

Per format, our reader (`formats.extract` and chunking, in this process) is timed beside a reference run by
REF_PYTHON, a throwaway venv with the other candidates (bench-work/formats/ref unless named): pypdf and
pdfminer.six for PDF (text per page only), docutils for reST (a doctree, no Sphinx), python-docx's
paragraphs alone for Word (the floor under our reader, which adds headings, lists and tables). A "page" is
a PDF page, or a file of the other formats. PDF text quality is measured too: against the LaTeX sources
shipped beside 45 of the PDFs, the share of extracted words found in the source's vocabulary (precision)
and of the source's words found in the text (recall), and words broken by a hyphen at a line's end.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

from bench import common
from lancelot_indexer.chunking.chunk import chunk
from lancelot_indexer.readers import formats

POSTGRES = common.POSTGRES_MANUAL
TEXLIVE = Path("/usr/share/doc/texlive-doc/latex/base")
PYTHON_SOURCES = common.PYTHON_MANUAL / "_sources"
# The other candidates, in bench-work/formats/ref: never in Lancelot's dependencies.
REFERENCES = ("pypdf==7.*", "pdfminer.six==20260107", "docutils==0.23.*")
WORD_FILES = 200
# The references read the PDFs but the 1,221 pages of source2e.pdf: pdfminer.six would take minutes.
REFERENCE_SKIPS = {"source2e.pdf"}
PARTS = ("pdf", "rst", "word", "html", "run")
_WORD = re.compile(r"[A-Za-z]{3,}")
_BROKEN = re.compile(r"[a-z]-\r?\n[a-z]")

REFERENCE = r"""
import json, sys, time
from pathlib import Path
kind, out, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
texts, pages = {}, 0
started = time.perf_counter()
if kind == "pypdf":
    from pypdf import PdfReader
    for path in paths:
        found = [page.extract_text() for page in PdfReader(path).pages]
        pages += len(found); texts[path] = "\n".join(found)
elif kind == "pdfminer":
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer
    for path in paths:
        found = ["".join(e.get_text() for e in page if isinstance(e, LTTextContainer)) for page in extract_pages(path)]
        pages += len(found); texts[path] = "\n".join(found)
elif kind == "docutils":
    import docutils.core
    settings = {"report_level": 5, "halt_level": 5, "file_insertion_enabled": False, "raw_enabled": False}
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        texts[path] = docutils.core.publish_doctree(text, settings_overrides=settings).astext()
        pages += 1
elapsed = time.perf_counter() - started
Path(out).write_text(json.dumps({"seconds": elapsed, "pages": pages, "texts": texts}), encoding="utf-8")
"""


def make_folder(work: Path) -> dict[str, list[Path]]:
    """The mixed folder under work/docs (made once), and its files by format."""
    docs = work / "docs"
    if not (docs / ".complete").exists():
        shutil.rmtree(docs, ignore_errors=True)
        shutil.copytree(POSTGRES, docs / "postgres", ignore=shutil.ignore_patterns("*.css", "*.svg", "*.png"))
        (docs / "latex").mkdir()
        for pdf in sorted(TEXLIVE.glob("*.pdf")):
            shutil.copy(pdf, docs / "latex" / pdf.name)
        for source in sorted(PYTHON_SOURCES.rglob("*.rst.txt")):
            target = docs / "python" / source.relative_to(PYTHON_SOURCES).with_suffix("").with_suffix(".rst")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
        _word_files(docs / "word")
        (docs / ".complete").write_text("", encoding="utf-8")
    by_suffix: dict[str, list[Path]] = {}
    for path in sorted(docs.rglob("*")):
        if path.is_file() and path.suffix in (".html", ".pdf", ".rst", ".docx"):
            by_suffix.setdefault(path.suffix, []).append(path)
    return by_suffix


def _word_files(folder: Path) -> None:
    """Word files with the headings and paragraphs of PostgreSQL pages, one a page."""
    import docx

    from lancelot_indexer.readers import html

    folder.mkdir(parents=True)
    for page in sorted(POSTGRES.glob("*.html"))[:WORD_FILES]:
        parsed = html.extract(page.read_text(encoding="utf-8", errors="replace"), page.name)
        document = docx.Document()
        document.core_properties.title = parsed.title
        for block in parsed.blocks:
            if block.level:
                document.add_heading(block.text, level=min(block.level, 9))
            elif block.whole:
                document.add_paragraph(block.text, style="No Spacing")
            else:
                document.add_paragraph(block.text)
        document.save(folder / page.with_suffix(".docx").name)


def ours(paths: list[Path], rounds: int) -> tuple[float, int, dict[Path, str]]:
    """Best time of our reader over `paths`, the pages read, and the text of each file."""
    best, pages, texts = float("inf"), 0, {}
    for _ in range(rounds):
        started = time.perf_counter()
        pages, texts = 0, {}
        for path in paths:
            reader = formats.format_of(path)
            data = path.read_bytes()
            content = data if reader.binary else data.decode("utf-8", errors="replace")
            document = formats.extract(reader, content, path.name)
            pieces = chunk(document.blocks, 1200)
            pages += len({block.page for block in document.blocks}) if path.suffix == ".pdf" else 1
            texts[path] = "\n".join(piece.text for piece in pieces)
        best = min(best, time.perf_counter() - started)
    return best, pages, texts


def reference(python: str, kind: str, paths: list[Path], work: Path) -> tuple[float, int, dict[Path, str]]:
    out = work / f"{kind}.json"
    subprocess.run([python, "-c", REFERENCE, kind, str(out), *map(str, paths)], check=True)
    found = json.loads(out.read_text(encoding="utf-8"))
    return found["seconds"], found["pages"], {Path(path): text for path, text in found["texts"].items()}


def word_floor(paths: list[Path], rounds: int) -> float:
    import docx

    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for path in paths:
            "\n".join(paragraph.text for paragraph in docx.Document(str(path)).paragraphs)
        best = min(best, time.perf_counter() - started)
    return best


def pdf_quality(texts: dict[Path, str]) -> str:
    precision, recall = [], []
    for path, text in texts.items():
        source = TEXLIVE / (path.stem + ".tex.gz")
        if not source.exists():
            continue
        with gzip.open(source, "rt", encoding="utf-8", errors="replace") as packed:
            words = packed.read()
        vocabulary = {word.lower() for word in _WORD.findall(re.sub(r"\\[A-Za-z]+", " ", words))}
        found = [word.lower() for word in _WORD.findall(text)]
        precision.append(sum(word in vocabulary for word in found) / max(len(found), 1))
        recall.append(len(vocabulary & set(found)) / max(len(vocabulary), 1))
    broken = sum(len(_BROKEN.findall(text)) for text in texts.values())
    mean = sum(precision) / len(precision), sum(recall) / len(recall)
    return f"precision {mean[0]:.3f}, recall {mean[1]:.3f} ({len(precision)} PDFs with sources), {broken} hyphen breaks"


def bench_pdf(files: dict[str, list[Path]], python: str, rounds: int, work: Path) -> None:
    seconds, pages, _ = ours(files[".pdf"], rounds)
    speed = f"{pages} pages in {seconds:.2f} s, {pages / seconds:.0f} pages/s"
    print(f"PDF, pypdfium2 (ours), all {len(files['.pdf'])} files: {speed}")
    pdfs = [path for path in files[".pdf"] if path.name not in REFERENCE_SKIPS]
    seconds, pages, texts = ours(pdfs, rounds)
    quality = pdf_quality(texts)
    print(f"PDF, pypdfium2 (ours), the references' {len(pdfs)} files: {pages / seconds:.0f} pages/s; {quality}")
    for kind in ("pypdf", "pdfminer"):
        theirs, their_pages, their_texts = reference(python, kind, pdfs, work)
        print(
            f"PDF, {kind}: {their_pages} pages in {theirs:.2f} s, {their_pages / theirs:.0f} pages/s "
            f"(ours {theirs / seconds * pages / their_pages:.1f}x faster); {pdf_quality(their_texts)}"
        )


def bench_rst(files: dict[str, list[Path]], python: str, rounds: int, work: Path) -> None:
    seconds, pages, texts = ours(files[".rst"], rounds)
    print(f"reST, own reader: {pages} files in {seconds:.2f} s, {pages / seconds:.0f} files/s")
    theirs, their_pages, their_texts = reference(python, "docutils", files[".rst"], work)
    markup = re.compile(r":[a-z-]+:`|^\.\. [a-z-]+::", re.MULTILINE)
    print(
        f"reST, docutils (no Sphinx): {their_pages / theirs:.0f} files/s (ours {theirs / seconds:.1f}x faster); "
        f"markup left in the text: ours {sum(len(markup.findall(t)) for t in texts.values())}, "
        f"docutils {sum(len(markup.findall(t)) for t in their_texts.values())} (its errors for Sphinx's roles "
        "and directives quote their source)"
    )


def bench_word(files: dict[str, list[Path]], rounds: int) -> None:
    seconds, pages, _ = ours(files[".docx"], rounds)
    floor = word_floor(files[".docx"], rounds)
    print(
        f"Word, python-docx (ours: headings, lists, tables): {pages / seconds:.0f} files/s; python-docx's paragraphs "
        f"alone {pages / floor:.0f} files/s (ours takes {seconds / floor:.2f}x their time)"
    )


def index_run(docs: Path, db: Path, rounds: int) -> float:
    """The best time of a whole lancelot-index run over `docs` into a new `db`."""
    best = float("inf")
    for _ in range(rounds):
        shutil.rmtree(db, ignore_errors=True)
        best = min(best, common.index(docs, db, "--quiet")[0])
    return best


def bench_run(files: dict[str, list[Path]], rounds: int, work: Path) -> None:
    """A whole run over the mixed folder, and over its HTML alone (the one format of the bench before issue 17)."""
    import pypdfium2

    pdf_pages = sum(len(pypdfium2.PdfDocument(path)) for path in files[".pdf"])
    total = pdf_pages + sum(len(paths) for suffix, paths in files.items() if suffix != ".pdf")
    mixed = index_run(work / "docs", work / "db", rounds)
    print(f"whole run, lancelot-index over the folder: {total} pages in {mixed:.2f} s, {total / mixed:.0f} pages/s")
    html = index_run(work / "docs" / "postgres", work / "db-html", rounds)
    pages = len(files[".html"])
    print(f"whole run over its HTML alone: {pages} pages in {html:.2f} s, {pages / html:.0f} pages/s")


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-formats", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rounds", nargs="?", type=int, default=1, help="our side's best of ROUNDS (default 1)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"some of {','.join(PARTS)}")
    parser.add_argument("--work", type=Path, default=common.WORK / "formats")
    parser.add_argument("--reference", help="python of a venv with pypdf, pdfminer.six, docutils (default: made)")
    arguments = parser.parse_args()
    common.installed(POSTGRES, TEXLIVE, common.PYTHON_MANUAL)
    work, rounds, parts = arguments.work, arguments.rounds, set(arguments.parts.split(","))
    if parts - set(PARTS):
        parser.error(f"--parts takes some of {','.join(PARTS)}; got {arguments.parts!r}")
    work.mkdir(parents=True, exist_ok=True)
    if arguments.reference is None and parts & {"pdf", "rst"}:
        arguments.reference = str(common.throwaway_venv(work / "ref", REFERENCES, "pypdf, pdfminer, docutils"))
    files = make_folder(work)
    print(f"folder: {', '.join(f'{len(paths)} {suffix}' for suffix, paths in files.items())} ({work / 'docs'})")
    if "pdf" in parts:
        bench_pdf(files, arguments.reference, rounds, work)
    if "rst" in parts:
        bench_rst(files, arguments.reference, rounds, work)
    if "word" in parts:
        bench_word(files, rounds)
    if "html" in parts:
        seconds, pages, _ = ours(files[".html"], rounds)
        print(f"HTML, selectolax (ours): {pages} files in {seconds:.2f} s, {pages / seconds:.0f} files/s")
    if "run" in parts:
        bench_run(files, rounds, work)


if __name__ == "__main__":
    main()
