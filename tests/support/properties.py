"""Document properties for files made in the tests: a PDF's document information, added the way an editor saves it."""

from __future__ import annotations

import re


def with_info(pdf: bytes, info: dict[str, str]) -> bytes:
    """`pdf` given a document information dictionary, appended as an incremental update (a new object, an xref
    section for it and a trailer pointing back at the previous one), as PDF editors save changes."""
    previous = int(pdf.rsplit(b"startxref", 1)[1].split()[0])
    size = int(re.findall(rb"/Size (\d+)", pdf)[-1])
    root = re.findall(rb"/Root (\d+) 0 R", pdf)[-1]
    body = b" ".join(b"/%s (%s)" % (key.encode(), _escaped(value)) for key, value in info.items())
    added = b"%d 0 obj\n<< %s >>\nendobj\n" % (size, body)
    start = len(pdf) + len(added)
    xref = b"xref\n%d 1\n%010d 00000 n \n" % (size, len(pdf))
    trailer = b"trailer\n<< /Size %d /Root %s 0 R /Info %d 0 R /Prev %d >>\n" % (size + 1, root, size, previous)
    return pdf + added + xref + trailer + b"startxref\n%d\n%%%%EOF\n" % start


def _escaped(text: str) -> bytes:
    return text.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
