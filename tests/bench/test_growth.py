"""bench-growth at a tiny size: two tables built by the real indexer, served over stdio from a folder and from moto."""

from __future__ import annotations

import json
import sys

import pytest

from bench import common, growth

pytestmark = pytest.mark.slow


def test_growth_builds_once_then_measures_every_kind_from_a_folder_and_a_bucket(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "manual"
    docs.mkdir()
    for number, query in enumerate(common.POSTGRES_QUERIES):  # every text search finds a passage, under sql- some
        page = f"<html><head><title>Page {number}</title></head><body><h1>{query}</h1><p>About {query}.</p></body>"
        (docs / f"{'sql-' if number % 2 else ''}page{number}.html").write_text(page + "</html>", encoding="utf-8")
    work = tmp_path / "work"
    arguments = ["bench-growth", "--docs", str(docs), "--copies", "1", "2", "--rounds", "1", "--work", str(work)]
    monkeypatch.setattr(sys, "argv", [*arguments, "--bucket"])
    growth.main()
    printed = capsys.readouterr().out
    built = [json.loads((work / f"build-{count}.json").read_text(encoding="utf-8")) for count in (1, 2)]
    assert [record["passages"] for record in built] == [16, 32]  # each copy's paths distinct: twice the rows
    assert "| 16 passages | 32 passages | last ÷ the one before |" in printed
    folder, bucket = printed.split("From a bucket")
    for kind in growth.KINDS:
        assert f"| {kind}: median (n " in folder and f"| {kind}: median (n " in bucket
    assert "index build: peak RSS, indexer + workers" in folder and "index build" not in bucket
    assert "server RSS after the queries" in bucket and "(target ≤ 2×: " in bucket

    manifests = sorted((work / "db-2" / "documents.lance" / "_versions").iterdir())
    monkeypatch.setattr(sys, "argv", [*arguments, "--copies", "2", "--build-only"])
    growth.main()  # kept: not indexed again
    assert sorted((work / "db-2" / "documents.lance" / "_versions").iterdir()) == manifests
    assert "2 copies: 32 passages" in capsys.readouterr().out
