"""How bench-s3 names a logged request: listing, HEAD, whole GET, ranged GET."""

from __future__ import annotations

from bench.s3 import operation


def test_each_logged_request_is_named_by_its_operation():
    assert operation("GET /b?list-type=2&prefix=db%2F&delimiter=%2F") == "list"
    assert operation("GET /b?delimiter=%2F&prefix=db%2F") == "list"
    assert operation("HEAD /b/db/documents.lance/_latest.manifest?") == "head"
    assert operation("GET /b/db/documents.lance/_versions/1.manifest?") == "get"
    assert operation("GET /b/db/documents.lance/data/x.lance? Range: bytes=0-147") == "ranged get"
    assert operation("PUT /b/db/documents.lance/_versions/2.manifest? If-None-Match: *") == "put"
