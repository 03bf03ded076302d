"""Every file is hashed; only files whose bytes changed, new ones and ones skipped before are read again."""

import hashlib

from lancelot_indexer.documents.changes import changes, fingerprints
from lancelot_indexer.documents.walk import Found


def found(root, **files):
    for name, data in files.items():
        (root / name).write_bytes(data)
    return [Found(root / name, name) for name in sorted(files)]


def digest(data):
    return hashlib.sha256(data).hexdigest()


def test_files_hashed_as_before_are_kept_and_the_rest_read_again(tmp_path):
    items = found(tmp_path, same=b"same", edited=b"new text", new=b"fresh", legacy=b"caf\xe9")
    known = {"same": digest(b"same"), "edited": digest(b"old text"), "gone": digest(b"x"), "legacy": digest(b"caf\xe9")}
    result = changes(items, known)
    assert [item.relative for item in result.to_read] == ["edited", "new"]
    assert result.kept == ["legacy", "same"]
    assert result.replaced == {"edited", "gone"}
    assert result.windows_1252 == ["legacy"]  # a kept file read as Windows-1252 is still listed


def test_without_a_previous_table_nothing_is_hashed_and_everything_is_read(tmp_path):
    items = found(tmp_path, a=b"a", b=b"b")
    result = changes(items, {})
    assert (result.to_read, result.kept, result.replaced) == (items, [], frozenset())


def test_an_unreadable_file_is_read_again_so_that_its_reason_is_reported(tmp_path):
    items = [*found(tmp_path, a=b"a"), Found(tmp_path / "vanished", "vanished")]
    assert fingerprints(items) == [(digest(b"a"), "utf-8"), None]
    result = changes(items, {"a": digest(b"a"), "vanished": digest(b"v")})
    assert [item.relative for item in result.to_read] == ["vanished"] and result.replaced == {"vanished"}
