"""Reading documents in worker processes gives the same table, skips and encodings as reading them here."""

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import lancedb

from lancelot_indexer.collect import POOL_MIN_FILES, collect
from lancelot_indexer.pipeline import Options, build

BIN = Path(sys.executable).parent


def many_docs(root: Path) -> Path:
    """More files than POOL_MIN_FILES, of every kind, with a few that are skipped or read as Windows-1252."""
    root.mkdir()
    for n in range(POOL_MIN_FILES + 8):
        match n % 4:
            case 0:
                (root / f"p{n:03}.html").write_text(
                    f"<title>Page {n}</title><h2>Part</h2><p>para {n}</p><pre>code {n}\n  indented</pre>",
                    encoding="utf-8",
                )
            case 1:
                (root / f"m{n:03}.md").write_text(f"# Note {n}\n\nText {n}.\n\n## Sub\n\nMore.\n", encoding="utf-8")
            case 2:
                (root / f"t{n:03}.txt").write_text(f"Plain {n}.\n\n" + "word " * 400, encoding="utf-8")
            case _:
                (root / f"s{n:03}.txt").write_bytes(b"caf\xe9 %d" % n if n % 8 == 3 else b"\x00binary")
    return root


def rows(db: Path) -> list[dict]:
    return sorted(lancedb.connect(db).open_table("documents").to_arrow().to_pylist(), key=lambda row: row["id"])


def test_the_command_reads_a_large_folder_in_workers_and_writes_what_one_process_writes(tmp_path):
    docs = many_docs(tmp_path / "docs")
    out = subprocess.run(
        [BIN / "lancelot-index", docs, tmp_path / "pooled"], capture_output=True, text=True, timeout=120, check=True
    )
    alone = build(docs, tmp_path / "alone", Options(workers=1))
    assert rows(tmp_path / "pooled") == rows(tmp_path / "alone")
    skipped = [line.strip() for line in out.stdout.splitlines() if line.startswith("  ")]
    assert skipped == [f"{item.relative}: {item.reason}" for item in alone.skipped]
    assert len(skipped) == (POOL_MIN_FILES + 8) // 8
    assert f"Read as Windows-1252 (not valid UTF-8): {', '.join(alone.windows_1252)}" in out.stdout


# In a fresh process, as the command does: forking this one (Lance already loaded) is not what users run.
IN_WORKERS = """
import json, sys
from dataclasses import asdict
from pathlib import Path
from lancelot_indexer.collect import collect
seen = []
collected = collect(Path(sys.argv[1]), 300, lambda *args: seen.append(args), workers=2)
print(json.dumps({"collected": asdict(collected), "progress": seen}))
"""


def test_two_workers_collect_the_same_rows_in_the_same_order_as_one_process(tmp_path):
    docs = many_docs(tmp_path / "docs")
    out = subprocess.run(
        [sys.executable, "-c", IN_WORKERS, docs], capture_output=True, text=True, timeout=120, check=True
    )
    pooled = json.loads(out.stdout)
    seen = []
    alone = collect(docs, 300, lambda *args: seen.append(list(args)), workers=1)
    assert pooled["collected"] == json.loads(json.dumps(asdict(alone)))
    assert pooled["progress"] == seen == [["read", n, len(seen)] for n in range(1, len(seen) + 1)]


def test_workers_started_from_a_process_that_loaded_lance_give_the_same_rows(tmp_path):
    # This process has Lance loaded (lancedb above): workers come from a forkserver, and Lance's
    # "not fork-safe" warning, an error under this suite's filterwarnings, is never raised.
    docs = many_docs(tmp_path / "docs")
    pooled = build(docs, tmp_path / "pooled", Options(workers=2))
    alone = build(docs, tmp_path / "alone", Options(workers=1))
    assert rows(tmp_path / "pooled") == rows(tmp_path / "alone")
    assert (pooled.documents, pooled.skipped, pooled.windows_1252) == (
        alone.documents,
        alone.skipped,
        alone.windows_1252,
    )
