"""The database the indexer writes: where it is, what Lance's errors there mean, and its lock.

    location = located(db)                  # a Path (a folder) or a Location (a folder or a bucket)
    with storage_failures(location): ...    # what Lance raises there, as the indexer's one-line errors
    with locked(location) as held: ...      # LockedError at once when another lancelot-index holds DB
        held.check()                        # LockedError if the lock was lost meanwhile (object storage)
    remove_temp_files(table_dir)            # the `.tmp*` files a killed write leaves in a folder

One lancelot-index at a time, from the first read to the last write (`lock.py`): a folder's lock is a lock
file, a bucket's a lease in a Lance dataset beside the tables (`lease.py`). The lock also tells whether the
last run finished; when it did not, what it wrote but never committed is removed (`leftovers.py`) as soon
as the lock is held, before this run writes anything. Where the database is and what Lance's errors mean:
`location.py`. Importing this package is cheap (no Lance), so a folder's lock is taken before the
documents are read and a second indexer stops at once.
"""

from lancelot_indexer.writing.database.leftovers import remove_temp_files
from lancelot_indexer.writing.database.location import conflict, failure, located, options, storage_failures
from lancelot_indexer.writing.database.lock import Held, locked

__all__ = ["Held", "conflict", "failure", "located", "locked", "options", "remove_temp_files", "storage_failures"]
