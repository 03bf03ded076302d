"""Vectors a run embedded, kept beside the table until its commit, so that a run stopped before the commit
(Ctrl-C, SIGTERM, `kill -9`, a failed request) has them embedded only once.

    staged = Staged.open(location, table, settings)   # under the lock; vectors of another model removed
    staged.found                                       # what runs that did not finish staged, or None
    staged.add(rows)                                   # text_hash and vector of newly embedded texts: one append
    staged.clear()                                     # the table holds them now: removed

A table's rows reach Lance in batches of thousands, streamed into data files that only the commit makes
readable (an unfinished file has no footer), so the rows a stopped run wrote cannot be read back. Instead the
extension (`--embed`) appends what it embeds here, every few hundred texts, each append a commit of a small
Lance dataset of its own, `DB/.lancelot-staged/TABLE.lance`: (text_hash, vector), stamped with the model, its
input and the width like a table. The next run looks up there what the table lacks, as it looks up the table
(`embedding/vectors.py`: the same stamp check, the hashes read once). Nothing of another model or input is
kept: the next run of another model (or none) removes it whole when it opens it. The run that commits the
table removes it, so it holds at most the texts embedded since the last commit, once each. Its name is no
table's (`NAME.lance` at the top of DB), so neither the server nor the leftovers (`database/leftovers.py`)
see it; an append killed halfway leaves files its own versions never name, gone with the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lancelot_indexer import log
from lancelot_indexer.writing import database
from lancelot_schema import layout
from lancelot_schema.storage import Location

if TYPE_CHECKING:
    import pyarrow as pa

FOLDER = ".lancelot-staged"
# What must match for staged vectors to be reused: the model and what it embedded (the width is the type).
_SAME = ("embedding_model", "embedded")


class Staged:
    """The staged vectors of one table: `found` (what runs that did not finish staged; None: none), `dataset`
    (theirs and this run's), `add` and `clear`."""

    def __init__(self, location: Location, table: str, dataset: Any) -> None:
        self.location, self.table = location, table
        self.found: Any = dataset
        self.dataset: Any = dataset
        self.added = 0  # rows appended by this run
        self._uri = location.table_uri(f"{FOLDER}/{table}")

    @classmethod
    def open(cls, location: Location, table: str, settings: dict[str, str] | None) -> Staged:
        """The vectors staged for `table` by runs that did not finish, if they are of the model and input in
        `settings` (an extension's); others are removed."""
        staged = cls(location, table, None)
        dataset = staged._existing()
        if dataset is None:
            return staged
        stamped = layout.decode_metadata(dataset.schema.metadata)
        wanted = {key.removeprefix("lancelot."): value for key, value in (settings or {}).items()}
        if settings is None or any(stamped.get(key) != wanted.get(key) for key in _SAME):
            staged.clear()
            return staged
        staged.found = staged.dataset = dataset
        log.info("vectors staged by a run that did not finish", rows=dataset.count_rows(), table=table)
        return staged

    def add(self, rows: pa.Table) -> None:
        """Append `rows` (text_hash, vector; stamped with the model): one commit. Staged vectors of another
        width (a model folder renamed) are replaced."""
        import lance

        if not rows.num_rows:
            return
        mode = "create"
        if self.dataset is not None:
            if self.dataset.schema.field(layout.VECTOR).type == rows.schema.field(layout.VECTOR).type:
                mode = "append"
            else:
                self.clear()
        try:
            self.dataset = lance.write_dataset(rows, self._uri, mode=mode, storage_options=self._options())
        except OSError as exc:
            if (known := database.failure(self.location, exc, self.table)) is not None:
                raise known from exc
            raise
        self.added += rows.num_rows

    def clear(self) -> None:
        """Remove every staged vector of the table (its whole dataset)."""
        from lance.file import LanceFileSession

        self.found = self.dataset = None
        if self.location.local:
            import shutil

            shutil.rmtree(self.location.path / FOLDER / f"{self.table}.lance", ignore_errors=True)
            return
        session = LanceFileSession(self._uri, storage_options=self._options())
        for path in session.list():
            session.delete_file(path)

    def _existing(self) -> Any:
        if self.location.local and not (self.location.path / FOLDER / f"{self.table}.lance").is_dir():
            return None
        import lance

        try:
            return lance.dataset(self._uri, storage_options=self._options())
        except ValueError as exc:  # none, or no version yet (a first append killed before its commit)
            if (known := database.failure(self.location, exc, self.table)) is not None:
                raise known from exc
            self.clear()
            return None

    def _options(self) -> dict[str, str] | None:
        return database.options(self.location)
