"""What a run prints for the person at the terminal: the summary paragraph, and a line for --embed.

summary(report) -> "Indexed 12 documents into 80 passages in table 'documents' of db in 0.4 s.\n..."
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from lancelot_indexer.documents.generated import Generated
from lancelot_indexer.pipeline import Report, count
from lancelot_indexer.printable import printable
from lancelot_schema import languages

if TYPE_CHECKING:
    from lancelot_indexer.embedding.vectors import EmbedReport


def embed_summary(report: EmbedReport) -> str:
    """What --embed did: new vectors, reused vectors, requests, and where the texts went."""
    # A local model's "requests" are its runs over a batch, on this machine.
    where = "on this machine" if report.host == "local" else f"at {report.host}"
    cost = count(report.requests, "model run" if report.host == "local" else "request")
    table = report.reused - report.resumed
    resumed = f", {report.resumed} kept from a run that was stopped" if report.resumed else ""
    return (
        f"Vectors: {count(report.embedded, 'passage')} embedded with {report.model} {where} "
        f"({cost}), {table} reused from the current table{resumed}; width {report.width}."
    )


def _full_text(report: Report) -> str:
    if not report.fts:
        return " (no full-text index)"
    return "" if report.language == languages.DEFAULT else f" (full-text index: {report.language})"


def generated_summary(pages: list[Generated]) -> str:
    """One line: how many generated pages were left out, which generators made them, and of what kinds."""
    generators = [name for name, _ in Counter(page.generator for page in pages).most_common()]
    made = ", ".join(generators[:-1]) + " and " + generators[-1] if len(generators) > 1 else generators[0]
    kinds = Counter(page.kind for page in pages)
    listed = ", ".join(kind.count(number) for kind, number in kinds.most_common())
    return f"Left out {count(len(pages), 'page')} that {made} generated: {listed} (--keep-generated indexes them)."


def summary(report: Report) -> str:
    """One paragraph for the person at the terminal: counts, every skipped file with its reason, time.

    Names are shown `printable`: one with a newline cannot forge a line of the summary.
    """
    lines = [
        f"Indexed {count(report.documents, 'document')} into {count(report.chunks, 'passage')} in table "
        f"{report.table!r} of {printable(report.db)} in {report.seconds:.1f} s" + _full_text(report) + "."
    ]
    if report.description:
        lines.append(f"Described as: {printable(report.description)} (what the assistant is told; --description).")
    if report.full is not None:
        lines.append(f"Read every document again: {report.full}.")
    elif report.kept or report.removed:
        lines.append(
            f"Since the last build: {count(report.read, 'document')} read (new or changed), {report.kept} unchanged, "
            f"{report.removed} removed."
        )
    if report.reread:
        by_format = ", ".join(f"{number} {suffix}" for suffix, number in report.reread.items())
        documents = count(sum(report.reread.values()), "document")
        lines.append(f"Read again as their reader changed: {documents} ({by_format}).")
    if report.generated:
        lines.append(generated_summary(report.generated))
    if report.windows_1252:
        lines.append(f"Read as Windows-1252 (not valid UTF-8): {', '.join(map(printable, report.windows_1252))}")
    if report.excluded:
        lines.append(f"Left out by --exclude: {count(len(report.excluded), 'path')}.")
    lines.extend(f"--exclude {pattern!r} matched nothing." for pattern in report.unmatched_exclude)
    if report.duplicates:
        lines.append(
            f"Left out {count(len(report.duplicates), 'duplicate')} (files or folders reached by more than one path, "
            "each indexed once, under its first path)."
        )
    if report.skipped:
        lines.append(f"Skipped {len(report.skipped)}:")
        lines.extend(f"  {printable(item.relative)}: {printable(item.reason)}" for item in report.skipped)
    return "\n".join(lines)
