"""Databases for the server's tests: the real indexer over a small document set, and AnythingLLM's layout.

Tests may write (the server may not): AnythingLLM tables and tables with vectors are written here
directly with LanceDB, in the columns those tools write.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent

# The document set. Paths matter for the `path` filter; odd.txt holds the strings a hostile query hunts for.
DOCS: dict[str, str] = {
    "guide/puncture.md": (
        "# Fixing a puncture\n\n## Finding the hole\n\nPump the tube and listen for the hiss of escaping air. "
        "Dip it in water if you cannot hear it.\n\n## Patching\n\nRoughen the rubber, spread the glue, wait a "
        "minute, then press the patch firmly.\n"
    ),
    "guide/chain.md": (
        "# Chain care\n\nClean the chain with a rag and a little degreaser every month, then oil every link.\n\n"
        "Ticket DEC-0054 records the recall of faulty chain links.\n"
    ),
    "notes/odd.txt": (
        "Members get 100% off the first service, members_only. Manuals live in C:\\temp\\bikes. "
        "It's the owner's favourite joke: \"; DROP TABLE documents; --. We ride 🚲 on Sundays.\n"
    ),
    "hours.html": (
        "<html><head><title>Opening hours</title></head><body><h1>Opening hours</h1>"
        "<p>The workshop is open from nine to six, Monday to Friday.</p></body></html>"
    ),
}


def write_docs(folder: Path, docs: dict[str, str] | None = None) -> Path:
    for relative, text in (DOCS if docs is None else docs).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


def index(docs: Path, db: Path, *options: str, env: dict[str, str] | None = None) -> None:
    """Run the real `lancelot-index DOCS DB [options]` (with `env` added to the environment); fail the
    test with its output if it fails."""
    done = subprocess.run(
        [str(BIN / "lancelot-index"), str(docs), str(db), "--quiet", *options],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env} if env else None,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def built(root: Path, docs: dict[str, str], *options: str) -> Path:
    """`docs` written under `root/docs` and indexed with `options` into `root/db`; the database."""
    index(write_docs(root / "docs", docs), root / "db", *options)
    return root / "db"


def anythingllm_header(title: str, published: str, source: str | None) -> str:
    """The header AnythingLLM's text splitter puts on every chunk (TextSplitter.stringifyHeader)."""
    lines = f"sourceDocument: {title}\npublished: {published}\n"
    if source:
        lines += f"source: {source}\n"
    return f"<document_metadata>\n{lines}</document_metadata>\n\n"


def anythingllm_table(db: Path, name: str = "workspace", width: int = 384) -> list[dict[str, Any]]:
    """A workspace table as AnythingLLM's LanceDB provider writes it: uuid ids, a vector, the chunk's text
    with its metadata header, and the document's metadata fields as columns. No full-text index."""
    import lancedb
    import pyarrow as pa

    documents = [
        ("puncture.md", "localfiles/puncture.md", "", "Pump the tube and listen for the hiss of escaping air."),
        ("chain.md", "localfiles/chain.md", "", "Ticket DEC-0054 records the recall of faulty chain links."),
        ("shop", "link://https://example.com/hours", "https://example.com/hours", "Open nine to six, weekdays."),
    ]
    rows = []
    for number, (title, chunk_source, url, text) in enumerate(documents):
        rows.append(
            {
                "id": str(uuid.UUID(int=number + 1)),
                "vector": [float((number + i) % 7) / 7.0 for i in range(width)],
                "text": anythingllm_header(title, "1/2/2025, 10:00:00 AM", url or None) + text,
                "url": url or f"file:///uploads/{title}",
                "title": title,
                "docAuthor": "no author found",
                "description": "No description found.",
                "docSource": "a text file uploaded by the user." if not url else "URL link uploaded by the user.",
                "chunkSource": chunk_source,
                "published": "1/2/2025, 10:00:00 AM",
                "wordCount": len(text.split()),
                "token_count_estimate": len(text) // 4,
            }
        )
    schema = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), width)),
            *(pa.field(key, pa.string()) for key in ("text", "url", "title", "docAuthor", "description")),
            *(pa.field(key, pa.string()) for key in ("docSource", "chunkSource", "published")),
            pa.field("wordCount", pa.int64()),
            pa.field("token_count_estimate", pa.int64()),
        ]
    )
    lancedb.connect(str(db)).create_table(name, pa.Table.from_pylist(rows, schema=schema))
    return rows


def add_vectors(db: Path, source_table: str, name: str, vector_of: Any, width: int) -> None:
    """Copy an indexer-built table to `name` with a `vector` column from `vector_of(text)` (as --embed will)."""
    import lancedb
    import pyarrow as pa

    connection = lancedb.connect(str(db))
    data = connection.open_table(source_table).to_arrow()
    vectors = pa.array([vector_of(text) for text in data.column("text").to_pylist()], pa.list_(pa.float32(), width))
    from lancedb.index import FTS

    table = connection.create_table(name, data.append_column("vector", vectors))
    table.create_index("text", config=FTS())


def plain_table(db: Path, name: str, rows: list[dict[str, Any]]) -> None:
    import lancedb

    lancedb.connect(str(db)).create_table(name, rows)
