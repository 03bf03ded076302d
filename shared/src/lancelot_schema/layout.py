"""The table layout that `lancelot-index` writes and `lancelot` reads.

A row is one chunk of one document. Tables written by other tools (AnythingLLM) are read too: their
source lives in `chunkSource` or `docSource` instead of `path`.
"""

from __future__ import annotations

import re
import unicodedata

DEFAULT_TABLE = "documents"
DEFAULT_TEXT_COLUMN = "text"
DEFAULT_CHUNK_SIZE = 1200

# LanceDB's rule for table names; the length keeps `NAME.lance` within a file name's 255 bytes.
_TABLE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,249}")


def table_name_problem(name: str) -> str | None:
    """Why LanceDB could not open a table called `name` (it is a folder `NAME.lance`), or None."""
    if _TABLE_NAME.fullmatch(name) and name not in (".", ".."):
        return None
    return f"{name!r} is not a table name: use 1 to 249 ASCII letters, digits, '_', '-' or '.' (not '.' or '..')."


# Columns written by lancelot-index, in table order.
ID = "id"
PATH = "path"
TITLE = "title"
HEADING = "heading"
TEXT = "text"
TEXT_HASH = "text_hash"
# Layout 2: where a passage sits in its document and its source file (null where a format has no such thing).
PASSAGE = "passage"  # int32: the passage's number in its document, from 0 (the N of its id `path#N`)
PASSAGES = "passages"  # int32: how many passages its document has (a read needs no count query)
LINE_START = "line_start"  # int32: first line of the passage in the source file, from 1 (Markdown, text)
LINE_END = "line_end"  # int32: last line of the passage in the source file
ANCHOR = "anchor"  # the `id` of the nearest HTML element that starts at or before the passage
# Layout 4: the SHA-256 of the passage's source file as read, on each of its rows; a rebuild reads again only
# the files whose hash changed (last, so that a table evolved from layout 3 keeps this column order).
FILE_HASH = "file_hash"
# Layout 5: the page a passage is on, from 1 (PDF; null elsewhere). A passage never spans two pages (last, so
# that a table evolved from layout 4 keeps this column order).
PAGE = "page"
# Layout 5 too: each document's own metadata, the same on each of its rows, null where it has none (last, after
# `page`). All text: ISO dates sort as text, the merge compares text columns, and the server filters them with
# pyarrow expressions that Lance runs before it ranks.
META = "meta"  # a JSON object: the document's front matter, HTML <meta>, PDF or Word properties, as written
TAGS = "tags"  # its tags and keywords, each `tag_key(tag) + TAG_SEPARATOR`, after one TAG_SEPARATOR: "\x1fa\x1fb\x1f"
DATE = "date"  # its date, YYYY-MM-DD (front matter `date`, HTML dates, PDF and Word creation dates)
FILE_TYPE = "file_type"  # its format: one of FILE_TYPES' values
VECTOR = "vector"
# The indexer's own bookkeeping: the hashes that tell a rebuild which passages and files changed. 64 hex digits
# each, meaningless to a reader: the server neither reads nor shows them in the tables lancelot-index stamps.
BOOKKEEPING: tuple[str, ...] = (TEXT_HASH, FILE_HASH)

INDEXER_COLUMNS: tuple[str, ...] = (
    ID, PATH, TITLE, HEADING, TEXT, TEXT_HASH, PASSAGE, PASSAGES, LINE_START, LINE_END, ANCHOR, FILE_HASH,
    PAGE, META, TAGS, DATE, FILE_TYPE,
)  # fmt: skip
# The columns a search filters on (`lancedb_search`'s tags, since, until and types); a table without them (layouts
# 1 to 4, or one written before layout 5 had them) cannot be filtered.
FILTER_COLUMNS: tuple[str, ...] = (TAGS, DATE, FILE_TYPE)
# The indexer's columns that hold 32-bit integers; every other one of INDEXER_COLUMNS holds text.
INTEGER_COLUMNS: tuple[str, ...] = (PASSAGE, PASSAGES, LINE_START, LINE_END, PAGE)
# A document's format by its file's suffix (lower-cased), as `file_type` holds it and `types` filters by it.
FILE_TYPES: dict[str, str] = {
    ".md": "md", ".markdown": "md", ".txt": "txt", ".html": "html", ".htm": "html", ".rst": "rst", ".pdf": "pdf",
    ".docx": "docx", ".rst.txt": "rst",
}  # fmt: skip
TAG_SEPARATOR = "\x1f"
# Longest tag kept, in characters once normalised (a longer one is cut, on both sides alike).
MAX_TAG = 100
_NOT_IN_TAGS = re.compile(r"[\s\x00-\x1f\x7f-\x9f\ud800-\udfff]+")


def tag_key(tag: str) -> str:
    """A tag as it is stored and matched: NFKC, case-folded, control characters and runs of white space one space,
    at most MAX_TAG characters; "" for a tag of none. The indexer and the server both use it, so `Python` matches
    `python` and no tag can hold the separator (nor a lone surrogate, which UTF-8 cannot)."""
    folded = unicodedata.normalize("NFKC", tag).casefold()
    return _NOT_IN_TAGS.sub(" ", folded).strip()[:MAX_TAG].strip()


# Columns the indexer builds a full-text (BM25) index on: text search matches a passage's text, its
# document's title and its heading trail (layout 2; layout 1 indexed the text only).
FULL_TEXT_COLUMNS: tuple[str, ...] = (TEXT, TITLE, HEADING)
# Columns the indexer builds a scalar (B-tree) index on: reading a document filters on them.
SCALAR_INDEXED_COLUMNS: tuple[str, ...] = (PATH, PASSAGE)
# Filter columns the indexer gives a bitmap index (few distinct values), so that a search filtered by them finds
# its rows in the index rather than by reading the column for every row of the table.
BITMAP_INDEXED_COLUMNS: tuple[str, ...] = (FILE_TYPE,)

# Where a hit's source comes from: the first of these columns that is non-empty. The first two are
# what AnythingLLM writes; `path` is ours.
SOURCE_COLUMNS: tuple[str, ...] = ("chunkSource", "docSource", PATH)
# What names a document in a table AnythingLLM wrote, before its source: its collector gives every upload the same
# docSource ("a text file uploaded by the user.") and an empty chunkSource, but each its own url (file:// and the
# file's path). A hit still shows its source; a document is the rows that share the first of these, then a source.
ANYTHINGLLM_DOCUMENT_COLUMNS: tuple[str, ...] = ("url", TITLE)

# Column names that hold embeddings in the layouts we read.
VECTOR_COLUMNS: tuple[str, ...] = (VECTOR,)

# Bumped when the meaning of a column or metadata key changes. 2: passage, passages, line_start, line_end, anchor,
# scalar indexes on path and passage, and the link template. 3: the language of the full-text indexes and what
# each vector embeds. 4: each row's file hash and the --exclude patterns, for incremental rebuilds. 5: each row's
# page (PDF), and each document's metadata, tags, date and file type. 6: the table's description. The server reads
# layouts 1 to 5 too (1 and 2: English; vectors of the passage text alone; before 6: no description).
LAYOUT_VERSION = "6"

# Keys stamped into the table's schema metadata by the indexer (bytes keys, as Arrow stores them).
META_LAYOUT_VERSION = "lancelot.layout_version"
META_INDEXER_VERSION = "lancelot.indexer_version"
META_CHUNK_SIZE = "lancelot.chunk_size"
META_INDEXED_AT = "lancelot.indexed_at"
META_EMBEDDING_MODEL = "lancelot.embedding_model"
META_VECTOR_WIDTH = "lancelot.vector_width"
META_EMBEDDING_HOST = "lancelot.embedding_host"
META_LINK_TEMPLATE = "lancelot.link_template"
META_LANGUAGE = "lancelot.language"  # languages.NAMES: how the full-text indexes split words
META_EMBEDDED = "lancelot.embedded"  # what a vector embeds: EMBEDDED_TEXT, or EMBEDDED_CONTEXT
META_EXCLUDE = "lancelot.exclude"  # the --exclude patterns the rows were read with, as a JSON list
META_SOURCE = "lancelot.source"  # the DOCS folder the rows were read from, absolute (not a row setting)
# Which reader, at which revision, read each suffix's files, as a JSON object ({".pdf": "pdf 2", ...}): a rebuild
# reads again the files whose reader changed since. Absent on tables stamped before readers had revisions. The
# indexer's bookkeeping, like BOOKKEEPING's columns: not among METADATA_KEYS, which the server reports.
META_READERS = "lancelot.readers"
# "true" when the generated pages of documentation builds (indexes, search pages...) were indexed too
# (`lancelot-index --keep-generated`); absent when they were left out.
META_KEEP_GENERATED = "lancelot.keep_generated"
# What the documents are, in one line (`lancelot-index --description`, or derived from the documents): what the
# server tells an assistant about the table (`about.py`). Not a row setting: changing it re-reads no file.
META_DESCRIPTION = "lancelot.description"

METADATA_KEYS: tuple[str, ...] = (
    META_LAYOUT_VERSION,
    META_INDEXER_VERSION,
    META_CHUNK_SIZE,
    META_INDEXED_AT,
    META_EMBEDDING_MODEL,
    META_VECTOR_WIDTH,
    META_EMBEDDING_HOST,
    META_LINK_TEMPLATE,
    META_LANGUAGE,
    META_EMBEDDED,
    META_EXCLUDE,
    META_SOURCE,
    META_KEEP_GENERATED,
    META_DESCRIPTION,
)

# What `--embed` embeds per passage (`META_EMBEDDED`): the passage text alone (layouts 1 and 2), or its
# document title and heading trail before its text.
EMBEDDED_TEXT = "text"
EMBEDDED_CONTEXT = "title+heading+text"


def chunk_id(relative_path: str, number: int) -> str:
    """The id of a chunk: its document's relative path and its 0-based chunk number."""
    return f"{relative_path}#{number}"


def passage_number(chunk_id: str) -> int | None:
    """The N of an id `path#N` written by lancelot-index, or None when `chunk_id` is not one."""
    _, sep, number = chunk_id.rpartition("#")
    if not sep or not number.isascii() or not number.isdigit() or len(number) > 9:
        return None
    return int(number)


def decode_metadata(raw: dict[bytes, bytes] | None) -> dict[str, str]:
    """Lancelot's own keys from an Arrow schema's metadata, as text, without the prefix."""
    if not raw:
        return {}
    found: dict[str, str] = {}
    for key in METADATA_KEYS:
        value = raw.get(key.encode())
        if value is not None:
            found[key.removeprefix("lancelot.")] = value.decode("utf-8", "replace")
    return found
