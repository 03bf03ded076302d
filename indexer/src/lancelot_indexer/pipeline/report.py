"""What a run did (`Report`), for the summary line and for callers of `build`, and what it left out logged."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from lancelot_indexer import log
from lancelot_indexer.documents.collect import Tally
from lancelot_indexer.documents.generated import Generated
from lancelot_indexer.documents.walk import Duplicate, Excluded, Found, Skipped
from lancelot_indexer.pipeline.given import Given, unmatched
from lancelot_indexer.pipeline.plan import Plan, left_out
from lancelot_indexer.readers import formats
from lancelot_indexer.writing import replace
from lancelot_schema import languages


@dataclass(frozen=True)
class Report:
    """What a run did, for the summary line and for callers of `build`."""

    docs: str
    db: str
    table: str
    documents: int
    chunks: int
    skipped: list[Skipped]
    windows_1252: list[str]
    seconds: float
    strategy: str
    version: int
    fts: bool
    extra: dict[str, int] = field(default_factory=dict)
    language: str = languages.DEFAULT
    excluded: list[Excluded] = field(default_factory=list)
    unmatched_exclude: list[str] = field(default_factory=list)  # --exclude patterns that matched nothing
    duplicates: list[Duplicate] = field(default_factory=list)  # found before under another path, left out
    read: int = 0  # documents read (parsed and chunked) in this run: all of them in a full build
    kept: int = 0  # documents whose rows stayed as they were: their files hash as before
    removed: int = 0  # documents of the previous table that are gone (removed, renamed, unusable now)
    full: str | None = None  # why every document was read, when there was a table: a setting that changed
    kept_rows: int = 0  # rows of the kept documents (their vectors too were reused)
    generated: list[Generated] = field(default_factory=list)  # pages of documentation builds left out
    reread: dict[str, int] = field(default_factory=dict)  # documents read again as their reader changed, by suffix
    description: str = ""  # what the table is stamped as holding: what the server tells an assistant


def report(run: Given, plan: Plan, result: replace.Result, tally: Tally, seconds: float, description: str) -> Report:
    options, found, changed = run.options, run.found, plan.changed
    skipped = [*found.skipped, *tally.skipped]
    reread = [item for item in changed.to_read if item.relative in plan.reread]
    return Report(
        docs=str(run.docs),
        db=str(run.db),
        table=options.table,
        documents=len(changed.kept) + tally.documents,
        chunks=result.rows,
        skipped=skipped,
        windows_1252=_in_walk_order([*changed.windows_1252, *tally.windows_1252], found.found),
        seconds=seconds,
        strategy=result.strategy,
        version=result.version,
        fts=result.fts,
        excluded=found.excluded,
        unmatched_exclude=unmatched(options, found),
        duplicates=found.duplicates,
        language=options.language,
        read=tally.documents,
        kept=len(changed.kept),
        removed=len(changed.replaced - tally.hashes.keys()) if plan.replaced is not None else 0,
        full=plan.full if plan.previous is not None else None,
        kept_rows=result.rows - tally.rows,
        generated=sorted([*found.generated, *left_out(plan, tally).values()], key=lambda page: page.relative),
        reread=dict(sorted(Counter(formats.suffix_of(item.relative) for item in reread).items())),
        description=description,
    )


def _in_walk_order(paths: list[str], found: list[Found]) -> list[str]:
    wanted = set(paths)
    return [item.relative for item in found if item.relative in wanted]


def log_leftovers(report: Report) -> None:
    """Log what the run left out: for a caller that prints no summary (which says the same), so it is said once."""
    for refused in report.skipped:
        log.warning("skipped", path=refused.relative, reason=refused.reason)
    for duplicate in report.duplicates:
        log.info("left out, found before under another path", path=duplicate.relative, first=duplicate.first)
    for pattern in report.unmatched_exclude:
        log.warning("--exclude matched nothing", pattern=pattern)
