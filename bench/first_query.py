"""The first text search of a fresh process, timed from after the imports: what a Lambda container whose init
phase imported Lance (provisioned concurrency, SnapStart) waits for at its first event, and issue 30's "first query
at most 1.0 s after the import". Run by `scripts/bench-s3` once per fresh process, with the server's settings in the
environment (LANCEDB_PATH and the rest); prints one JSON line: the seconds, the hits.

    .venv/bin/python -m bench.first_query QUERY
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> None:
    # The imports, not timed: Lance and what a search of it imports on first use.
    import lance
    import lance.query  # noqa: F401
    import numpy  # noqa: F401
    import pyarrow.compute  # noqa: F401

    from lancelot_schema import logs
    from lancelot_schema.settings import resolve
    from lancelot_server.storage import lance_table  # noqa: F401
    from lancelot_server.storage.store import Store
    from lancelot_server.tools import Tools

    logs.configure("WARNING")  # as `lancelot --log-level WARNING`: to stderr
    settings = resolve(dict(os.environ))
    started = time.perf_counter()
    tools = Tools(Store(settings.db_path, settings.storage), settings)
    reply = tools.search(sys.argv[1], mode="text")
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "hits": len(reply["hits"])}))
    tools.close()


if __name__ == "__main__":
    main()
