"""Small real PDF and Word files for the readers' tests, made here rather than shipped.

    make_pdf([[Line("Hello", 12, 700)], ...], title="T", outline=[Entry("Intro", 0, 720)]) -> bytes
    make_pdf(..., password="secret")     # RC4 40-bit standard security: opening needs the password
    make_pdf(..., images=True)           # pages that are one image each and no text (a scan)
    spinning_pdf(millions=40)            # a page whose content stream inflates to 40 M operators
    zeros_pdf(megabytes=2048)            # a page whose content stream inflates to 2 GB of zeros (2 MB stored)
    self_kid_pdf()                       # 238 bytes: a page tree that lists itself as its own kid
    docx_with_body(b"<w:p>...</w:p>" * 1_000_000)   # a .docx of exactly that body

The PDFs are written object by object (PDF 1.7, the standard Helvetica font, which viewers and PDFium
have built in), so each test says exactly what is on each page and where.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

# The padding string of the standard security handler (PDF 1.7, 7.6.3.3).
_PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")
_FILE_ID = hashlib.md5(b"lancelot test").digest()  # the PDF format's own hash
_PERMISSIONS = -44


@dataclass(frozen=True)
class Line:
    """A line of text at (x, y) from the page's bottom left, in points, in Helvetica of `size` points."""

    text: str
    size: float = 11
    y: float = 700
    x: float = 72


@dataclass(frozen=True)
class Entry:
    """An outline entry pointing at page `page` (from 0) at height `y`; `children` under it."""

    title: str
    page: int
    y: float
    children: tuple[Entry, ...] = ()


def _escaped(text: str) -> bytes:
    return text.encode("cp1252").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _content(lines: list[Line]) -> bytes:
    shown = b"BT /F1 %.2f Tf 1 0 0 1 %.2f %.2f Tm (%s) Tj ET"
    return b"\n".join(shown % (line.size, line.x, line.y, _escaped(line.text)) for line in lines)


def _rc4(key: bytes, data: bytes) -> bytes:
    box = list(range(256))
    j = 0
    for i in range(256):
        j = (j + box[i] + key[i % len(key)]) % 256
        box[i], box[j] = box[j], box[i]
    out = bytearray()
    i = j = 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + box[i]) % 256
        box[i], box[j] = box[j], box[i]
        out.append(byte ^ box[(box[i] + box[j]) % 256])
    return bytes(out)


def _padded(password: str) -> bytes:
    return (password.encode("latin-1") + _PAD)[:32]


class _Security:
    """Revision 2 of the standard security handler: a 40-bit RC4 key from the user password."""

    def __init__(self, password: str) -> None:
        owner = _rc4(hashlib.md5(_padded(password + "-owner")).digest()[:5], _padded(password))
        permissions = _PERMISSIONS.to_bytes(4, "little", signed=True)
        self.key = hashlib.md5(_padded(password) + owner + permissions + _FILE_ID).digest()[:5]
        self.owner, self.user = owner, _rc4(self.key, _PAD)

    def encrypt(self, number: int, data: bytes) -> bytes:
        key = hashlib.md5(self.key + number.to_bytes(3, "little") + b"\0\0").digest()[:10]
        return _rc4(key, data)

    def dictionary(self) -> bytes:
        return b"<< /Filter /Standard /V 1 /R 2 /O <%s> /U <%s> /P %d >>" % (
            self.owner.hex().encode(),
            self.user.hex().encode(),
            _PERMISSIONS,
        )


class _Writer:
    def __init__(self, password: str | None) -> None:
        self.objects: dict[int, bytes] = {}
        self.security = _Security(password) if password is not None else None

    def add(self, number: int, body: bytes) -> None:
        self.objects[number] = body

    def stream(self, number: int, data: bytes, extra: bytes = b"") -> None:
        if self.security is not None:
            data = self.security.encrypt(number, data)
        self.objects[number] = b"<< /Length %d %s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"

    def text(self, number: int, text: str) -> bytes:
        """A string object of object `number`, encrypted when the file is."""
        raw = text.encode("cp1252")
        if self.security is not None:
            return b"<%s>" % self.security.encrypt(number, raw).hex().encode()
        return b"(" + _escaped(text) + b")"

    def bytes(self, root: int, info: int | None) -> bytes:
        out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        offsets: dict[int, int] = {}
        for number in sorted(self.objects):
            offsets[number] = len(out)
            out += b"%d 0 obj\n" % number + self.objects[number] + b"\nendobj\n"
        size = max(self.objects) + 1
        start = len(out)
        out += b"xref\n0 %d\n" % size
        for number in range(size):
            out += b"%010d 00000 n \n" % offsets[number] if number in offsets else b"0000000000 65535 f \n"
        identifier = _FILE_ID.hex().encode()
        trailer = b"/Size %d /Root %d 0 R /ID [<%s> <%s>]" % (size, root, identifier, identifier)
        if info is not None:
            trailer += b" /Info %d 0 R" % info
        if self.security is not None:
            trailer += b" /Encrypt " + self.security.dictionary()
        out += b"trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n" % (trailer, start)
        return bytes(out)


def make_pdf(
    pages: list[list[Line]],
    *,
    title: str | None = None,
    outline: list[Entry] | None = None,
    password: str | None = None,
    images: bool = False,
    contents: list[bytes] | None = None,
) -> bytes:
    """A PDF with `pages` (each a list of lines), and optionally a Title, an outline, a user password.

    `images`: every page shows one small image and no text. `contents`: raw content streams (already
    FlateDecode-compressed) in place of the pages' lines.
    """
    writer = _Writer(password)
    count = len(contents) if contents is not None else len(pages)
    page_numbers = [10 + 2 * index for index in range(count)]
    writer.add(1, b"<< /Type /Catalog /Pages 2 0 R%s >>" % (b" /Outlines 4 0 R" if outline else b""))
    kids = b" ".join(b"%d 0 R" % number for number in page_numbers)
    writer.add(2, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count))
    writer.add(3, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    image = b"/Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8"
    writer.stream(5, b"\x00\xff\xff\x00", image)
    for index, number in enumerate(page_numbers):
        resources = b"/Font << /F1 3 0 R >> /XObject << /Im1 5 0 R >>"
        page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << %s >> /Contents %d 0 R >>"
        writer.add(number, page % (resources, number + 1))
        if contents is not None:
            writer.stream(number + 1, contents[index], b"/Filter /FlateDecode")
        elif images:
            writer.stream(number + 1, b"q 400 0 0 500 100 150 cm /Im1 Do Q")
        else:
            writer.stream(number + 1, _content(pages[index]))
    if outline:
        _outline(writer, outline, 4, page_numbers)
    info = None
    if title is not None:
        info = 6
        producer = writer.text(info, "lancelot tests")
        writer.add(info, b"<< /Title %s /Producer %s >>" % (writer.text(info, title), producer))
    return writer.bytes(1, info)


def _outline(writer: _Writer, entries: list[Entry], root: int, page_numbers: list[int]) -> None:
    numbers = iter(range(1000, 100000))

    def items(parent: int, children: tuple[Entry, ...] | list[Entry]) -> tuple[int, int]:
        mine = [next(numbers) for _ in children]
        for position, (entry, number) in enumerate(zip(children, mine, strict=True)):
            links = b"/Parent %d 0 R" % parent
            if position:
                links += b" /Prev %d 0 R" % mine[position - 1]
            if position + 1 < len(mine):
                links += b" /Next %d 0 R" % mine[position + 1]
            if entry.children:
                first, last = items(number, entry.children)
                links += b" /First %d 0 R /Last %d 0 R /Count %d" % (first, last, len(entry.children))
            dest = b"[%d 0 R /XYZ 72 %.2f 0]" % (page_numbers[entry.page], entry.y)
            writer.add(number, b"<< /Title %s %s /Dest %s >>" % (writer.text(number, entry.title), links, dest))
        return mine[0], mine[-1]

    first, last = items(root, entries)
    writer.add(root, b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (first, last, len(entries)))


def spinning_pdf(millions: int = 40) -> bytes:
    """One page whose content stream, 150 KB as stored, inflates to `millions` million `q Q` operators
    (save and restore the graphics state) before its text: PDFium parses about ten million a second."""
    packer = zlib.compressobj(9)
    block = b"q Q " * 1_000_000
    data = b"".join(packer.compress(block) for _ in range(millions))
    data += packer.compress(b"BT /F1 12 Tf 72 700 Td (the end) Tj ET") + packer.flush()
    return make_pdf([[]], contents=[data])


def _deflated_zeros(megabytes: int) -> bytes:
    """`megabytes` MB of zero bytes, zlib-compressed, in about a kilobyte a megabyte, without compressing them all:
    once the window holds zeros, each further megabyte compresses to the same bytes."""
    packer = zlib.compressobj(9)
    zeros = bytes(1 << 20)
    first = packer.compress(zeros) + packer.flush(zlib.Z_SYNC_FLUSH)
    again = packer.compress(zeros) + packer.flush(zlib.Z_SYNC_FLUSH)
    end = packer.flush()[:-4]  # the final block, without the checksum of two megabytes
    adler = (megabytes << 20) % 65521 << 16 | 1  # Adler-32 of zeros: the sum stays 1, each byte adds it to the other
    return first + again * (megabytes - 1) + end + adler.to_bytes(4, "big")


def zeros_pdf(megabytes: int = 2048) -> bytes:
    """One page whose FlateDecode content stream inflates to `megabytes` MB of zeros (white space to PDFium)."""
    return make_pdf([[]], contents=[_deflated_zeros(megabytes)])


def self_kid_pdf() -> bytes:
    """A PDF whose page tree lists itself as its own kid, and so holds no page PDFium can load (238 bytes)."""
    bodies = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    start = len(out)
    out += b"xref\n0 3\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % start
    return bytes(out)


def docx_with_body(body: bytes) -> bytes:
    """A .docx (python-docx's blank document) whose body holds `body`, WordprocessingML as written."""
    import docx

    blank = zipfile.ZipFile(io.BytesIO(docx_bytes(docx.Document())))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as made:
        for part in blank.infolist():
            data = blank.read(part)
            if part.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + body, 1)
            made.writestr(part, data)
    return out.getvalue()


def docx_bytes(document: Any) -> bytes:
    """A python-docx `Document` as the bytes of its .docx file."""
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
