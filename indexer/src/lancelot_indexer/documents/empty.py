"""Why a run found no document to index, said in the error that stops it: what DOCS holds instead (files by
suffix, documents that could not be read, paths --exclude left out), which formats are read, and what
became of the table. Everything the run would otherwise log about its leftovers is in this one message.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from lancelot_indexer.documents.collect import Walked
from lancelot_indexer.documents.walk import Skipped
from lancelot_indexer.errors import EmptyDocsError
from lancelot_indexer.readers.formats import FORMATS
from lancelot_indexer.wording import count
from lancelot_schema.storage import Location

# Suffixes named one by one before the rest are counted together.
SHOWN_SUFFIXES = 6
SHOWN_SKIPPED = 3


def error(
    docs: Path | Location,
    found: Walked,
    skipped: list[Skipped],
    unmatched: list[str],
    table: str | None,
    generated: int = 0,
) -> EmptyDocsError:
    """The error of a run over `docs` that found nothing to index; `table` names the table it leaves as it
    was, None when there is none (nothing was written); `generated` counts the generated pages left out."""
    said = [f"No documents found in {docs}{_holds(found, skipped, generated)}."]
    if skipped:
        shown = "; ".join(f"{item.relative}: {item.reason}" for item in skipped[:SHOWN_SKIPPED])
        more = len(skipped) - SHOWN_SKIPPED
        said.append(f"Could not read {shown}" + (f"; and {more} more." if more > 0 else "."))
    said.extend(f"--exclude {pattern!r} matched nothing." for pattern in unmatched)
    said.append(f"lancelot-index reads {formats()}.")
    if table is None:
        said.append("No table was written.")
    else:
        said.append(f"The table {table!r} was left as it was; --allow-empty empties it.")
    return EmptyDocsError(" ".join(said))


def _holds(found: Walked, skipped: list[Skipped], generated: int) -> str:
    """What DOCS holds instead of documents, after a colon; "" when all it holds is documents not read."""
    ranked = sorted(found.ignored.items(), key=lambda pair: (-pair[1], pair[0]))
    named = [
        f"{number} {suffix}" if suffix else f"{count(number, 'file')} without a suffix" for suffix, number in ranked
    ]
    if len(named) > SHOWN_SUFFIXES:
        others = sum(number for _, number in ranked[SHOWN_SUFFIXES:])
        named = [*named[:SHOWN_SUFFIXES], f"{others} other"]
    if found.excluded:
        named.append(f"{count(len(found.excluded), 'path')} left out by --exclude")
    if generated:
        named.append(f"{count(generated, 'generated page')} left out (--keep-generated indexes them)")
    if named:
        return f": it holds {', '.join(named)}"
    return "" if skipped else ": it holds no file (names that start with a dot are left out)"


def formats() -> str:
    """The suffixes read, and the extras that add the formats whose library is not installed."""
    missing = {
        suffix: found.extra
        for suffix, found in FORMATS.items()
        if found.extra is not None and found.library is not None and importlib.util.find_spec(found.library) is None
    }
    read = ", ".join(suffix for suffix in FORMATS if suffix.count(".") == 1)  # .rst.txt is a kind of .txt
    if not missing:
        return read
    extras = ",".join(dict.fromkeys(missing.values()))
    return f"{read} ({' and '.join(missing)} once installed with pip install 'lancelot-indexer[{extras}]')"
