"""The indexing pipeline: walk DOCS, read what changed into rows, write them.

    build(docs, db, Options()) -> Report

A rebuild hashes every file and reads (parses, chunks, embeds) only those whose hash differs from the
one their rows were made from (`sources.py`, `changes.py`); the rows of the changed documents replace
theirs in one merge. Any change to what a row holds (chunk size, language, link template, exclusions,
generated pages kept, embedding model, layout or indexer version) reads every file again; a reader that
changed reads its own format's files again (`sources.known`). The generated pages of documentation builds
are left out (`documents/generated.py`): not in the folder's documents, their rows of an older table go. Rows go to
the writer in batches as they are read (`stream.py`), so memory does not grow with the folder.

Under the lock, a run (`run.py`) plans, then applies: `plan.py` learns what the table was built from and decides
which files are read, which documents keep their rows and whose rows go (a `Plan`: every file hashed, none
parsed); `apply.py` reads those files into rows and writes them in one commit, or, when nothing changed,
writes at most a new stamp. `given.py` holds what a run is given (`Options`, the stamp), `report.py` what it did.

`build` holds the database lock from the first read of the current table to the last write, so an
`Extension` (embeddings) can look at the current table, add columns and metadata, and be sure that what
it looked at is what gets replaced. Importing this package is cheap: the writer (pyarrow, Lance) is
imported while the documents are read, and not at all when nothing changed in a folder.

The database is a folder (a Path, or a `Location`) or a `Location` on object storage: the same steps, the
same promises. There the lock is a lease in a Lance dataset (`lease.py`), so Lance is imported before the
documents are read, and the worker processes are forked before it. A run that changes no row but finds the
table stamped with another DOCS folder (the same documents, elsewhere) stamps its own in one metadata commit,
and so does one given another `--description`: what the server tells an assistant the table holds, kept by
every rebuild until given again; a table without one gets one from the documents (`documents/description.py`).
"""

from lancelot_indexer.documents.collect import ProgressCallback
from lancelot_indexer.pipeline.given import Options, metadata
from lancelot_indexer.pipeline.report import Report, log_leftovers
from lancelot_indexer.pipeline.run import build
from lancelot_indexer.wording import count
from lancelot_indexer.writing.replace import Extension

__all__ = ["Extension", "Options", "ProgressCallback", "Report", "build", "count", "log_leftovers", "metadata"]
