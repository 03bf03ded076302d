"""Databases for the server's tests: the real indexer over a small document set, and AnythingLLM's layout.

Tests may write (the server may not): AnythingLLM tables and tables with vectors are written here
directly with LanceDB, in the columns those tools write.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from tests.support.indexing import run_index

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
    """Run the real `lancelot-index DOCS DB --quiet [options]` (with `env` added to the environment), in this
    process; fail the test with its message if it fails."""
    run_index(docs, db, "--quiet", *options, env=env)


def index_command(docs: Path, db: Path, *options: str) -> None:
    """`index` as a process of its own: for a rebuild from another thread while the test talks to a server
    (the command sets a signal handler, which only the main thread may)."""
    done = subprocess.run(
        [str(BIN / "lancelot-index"), str(docs), str(db), "--quiet", *options],
        capture_output=True,
        text=True,
        timeout=120,
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


# What AnythingLLM's collector writes for each kind of document (the JSON its server then embeds), by the file
# that writes it in Mintplex-Labs/anything-llm: (title, url, docSource, chunkSource, docAuthor, description, chunks).
HOTDIR = "/app/collector/hotdir"  # the collector's WATCH_DIRECTORY in its Docker image
ANYTHINGLLM_DOCUMENTS: list[tuple[str, str, str, str, str, str, list[str]]] = [
    # collector/processSingleFile/convert/asTxt.js: an upload's url is its path, its chunkSource empty.
    (
        "chain-care.txt",
        f"file://{HOTDIR}/chain-care.txt",
        "a text file uploaded by the user.",
        "",
        "Unknown",
        "Unknown",
        ["Clean the sprocket and the chain every month.", "Then oil every link of the chain."],
    ),
    (
        "puncture.txt",
        f"file://{HOTDIR}/puncture.txt",
        "a text file uploaded by the user.",
        "",
        "Unknown",
        "Unknown",
        ["Pump the tube and listen for the hiss.", "A worn sprocket never causes a puncture."],
    ),
    # collector/processSingleFile/convert/asPDF/index.js
    (
        "manual.pdf",
        f"file://{HOTDIR}/manual.pdf",
        "pdf file uploaded by the user.",
        "",
        "no author found",
        "No description found.",
        ["The manual of the workshop, printed."],
    ),
    # collector/processLink/convert/generic.js: the link is in chunkSource, the url a file name made from it.
    (
        "example.com_hours.html",
        "file://example.com_hours.html",
        "URL link uploaded by the user.",
        "link://https://example.com/hours",
        "no author found",
        "No description found.",
        ["Open nine to six on weekdays; sprocket repairs on Saturday."],
    ),
    # collector/processRawText/index.js, with a title and no other metadata.
    (
        "shop-notes.txt",
        "file://shop-notes.txt",
        "no source set",
        "shop-notes.txt",
        "no author specified",
        "no description found",
        ["Order brake pads before spring."],
    ),
]


def anythingllm_workspace(db: Path, name: str, width: int) -> list[dict[str, Any]]:
    """A workspace table exactly as AnythingLLM writes it, for the documents of ANYTHINGLLM_DOCUMENTS.

    server/utils/vectorDbProviders/lance/index.js (addDocumentToNamespace) stores each chunk as
    `{...metadata, text, id: uuidv4(), vector}`, where metadata is the collector's JSON less pageContent and docId:
    id, url, title, docAuthor, description, docSource, chunkSource, published, wordCount, token_count_estimate, in
    that order. Each chunk's text starts with the header of server/utils/TextSplitter (`source:` only for a link).
    @lancedb/lancedb makes a JavaScript number a float64 and `vector` a list of float32; the vectors here are
    the test endpoint's, `width` wide, so that vector search finds them. No full-text index.
    """
    import lancedb
    import pyarrow as pa
    from tests.support.fake_vectors import hashed_vector

    rows = []
    for title, url, doc_source, chunk_source, author, description, chunks in ANYTHINGLLM_DOCUMENTS:
        content = " ".join(chunks)
        link = chunk_source.removeprefix("link://") if chunk_source.startswith("link://") else None
        for chunk in chunks:
            text = anythingllm_header(title, "12/1/2026, 9:30:00 AM", link) + chunk
            rows.append(
                {
                    "id": str(uuid.uuid4()),
                    "url": url,
                    "title": title,
                    "docAuthor": author,
                    "description": description,
                    "docSource": doc_source,
                    "chunkSource": chunk_source,
                    "published": "12/1/2026, 9:30:00 AM",
                    "wordCount": float(len(content.split(" "))),
                    "token_count_estimate": float(len(content) // 4),
                    "text": text,
                    "vector": hashed_vector(text, width),
                }
            )
    strings = ("id", "url", "title", "docAuthor", "description", "docSource", "chunkSource", "published")
    schema = pa.schema(
        [
            *(pa.field(key, pa.string()) for key in strings),
            pa.field("wordCount", pa.float64()),
            pa.field("token_count_estimate", pa.float64()),
            pa.field("text", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), width)),
        ]
    )
    lancedb.connect(str(db)).create_table(name, pa.Table.from_pylist(rows, schema=schema))
    return rows
