import codecs

import pytest

from lancelot_indexer.readers.decode import CP1252, UTF8, UTF16, BinaryError, decode


def test_utf8_with_and_without_bom():
    assert decode("naïve".encode()) == decode(codecs.BOM_UTF8 + "naïve".encode())
    assert decode("naïve".encode()).encoding == UTF8


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_a_bom_is_read_despite_its_nul_bytes(encoding):
    data = "Grüße".encode(encoding)
    if encoding != "utf-16":
        data = (codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE) + data
    assert decode(data).text == "Grüße"
    assert decode(data).encoding == UTF16


def test_invalid_utf8_falls_back_to_windows_1252():
    decoded = decode(b"\x93quoted\x94 caf\xe9 \x81")
    assert decoded.encoding == CP1252
    assert decoded.text == "\u201cquoted\u201d café \ufffd"


def test_nul_bytes_mean_binary():
    with pytest.raises(BinaryError, match="NUL"):
        decode(b"text\x00more")
