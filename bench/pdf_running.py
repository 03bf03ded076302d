"""The running lines the PDF reader drops (heads, feet, page numbers) over a folder of PDFs, by file.

    .venv/bin/python -m bench.pdf_running [FOLDER]

FOLDER defaults to Debian's texlive-latex-base-doc PDFs. Prints, per file with dropped lines, its pages, lines
and dropped lines with their most common words (digits shown as 0); then the totals, the page numbers (lines
of digits alone) apart.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]  # no type information

from bench import common
from lancelot_indexer.readers import pdf

TEXLIVE = Path("/usr/share/doc/texlive-doc/latex/base")


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else TEXLIVE
    if folder == TEXLIVE:
        common.installed(TEXLIVE)
    files = pages = lines = numbers = 0
    dropped: Counter[str] = Counter()
    for path in sorted(folder.glob("*.pdf")):
        document = pdfium.PdfDocument(path.read_bytes())
        try:
            read = [pdf._lines(document, index) for index in range(len(document))]
        finally:
            document.close()
        kept = pdf._without_running(read, pdf._body_size(read)) if any(read) else read
        gone = [line for before, after in zip(read, kept, strict=True) for line in before if line not in after]
        files, pages, lines = files + 1, pages + len(read), lines + sum(map(len, read))
        numbers += sum(line.text.strip("–-— ").isdigit() for line in gone)
        words = Counter(pdf._DIGITS.sub("0", line.text) for line in gone)
        dropped.update(words)
        if gone:
            common_words = "; ".join(f"{text[:60]!r} x{count}" for text, count in words.most_common(2))
            print(f"{path.name}: {len(read)} pages, {sum(map(len, read))} lines, {len(gone)} dropped ({common_words})")
    total = sum(dropped.values())
    print(
        f"\n{files} PDFs, {pages} pages, {lines} lines: {total} dropped, {numbers} of them page numbers alone, "
        f"{total - numbers} running heads or feet ({len(dropped)} distinct once digits are masked)"
    )


if __name__ == "__main__":
    main()
