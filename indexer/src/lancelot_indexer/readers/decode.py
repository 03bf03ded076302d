"""Bytes to text: BOMs honoured, UTF-8 first, Windows-1252 as the fallback, NUL bytes mean binary."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

UTF8 = "utf-8"
UTF16 = "utf-16"
CP1252 = "windows-1252"


class BinaryError(ValueError):
    """The bytes are not text."""


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str


def decode(data: bytes) -> Decoded:
    """The text of `data` and the encoding it was read with; raises BinaryError for binary data."""
    if data.startswith(codecs.BOM_UTF8):
        return Decoded(data[len(codecs.BOM_UTF8) :].decode(UTF8, errors="replace"), UTF8)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # UTF-16 is full of NUL bytes, so the BOM must be checked before the binary test.
        try:
            return Decoded(data.decode(UTF16), UTF16)
        except UnicodeDecodeError as exc:
            raise BinaryError("starts with a UTF-16 byte order mark but is not UTF-16") from exc
    if b"\x00" in data:
        raise BinaryError("binary file (contains NUL bytes)")
    try:
        return Decoded(data.decode(UTF8), UTF8)
    except UnicodeDecodeError:
        # Five byte values are undefined in Windows-1252; they become U+FFFD rather than failing the file.
        return Decoded(data.decode("cp1252", errors="replace"), CP1252)


def encoding_of(data: bytes) -> str:
    """The encoding `decode` reads `data` with; ASCII (most documents) is known without decoding it."""
    if data.isascii() and b"\x00" not in data:
        return UTF8
    return decode(data).encoding
