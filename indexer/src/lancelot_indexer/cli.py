"""`lancelot-index DOCS DB`: parse, resolve settings once, run the pipeline, print a summary."""

from __future__ import annotations

import os
from pathlib import Path

import click

from lancelot_indexer import __version__
from lancelot_indexer.errors import IndexerError
from lancelot_indexer.pipeline import Options, Report, build, log
from lancelot_indexer.progress import bar
from lancelot_schema import layout, logs, settings, stored


def summary(report: Report) -> str:
    """One paragraph for the person at the terminal: counts, every skipped file with its reason, time."""
    lines = [
        f"Indexed {report.documents} documents into {report.chunks} chunks in table {report.table!r} "
        f"of {report.db} in {report.seconds:.1f} s" + ("" if report.fts else " (no full-text index)") + "."
    ]
    if report.windows_1252:
        lines.append(f"Read as Windows-1252 (not valid UTF-8): {', '.join(report.windows_1252)}")
    if report.skipped:
        lines.append(f"Skipped {len(report.skipped)}:")
        lines.extend(f"  {item.relative}: {item.reason}" for item in report.skipped)
    return "\n".join(lines)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="lancelot-index")
@click.argument("docs", type=click.Path(file_okay=False, path_type=Path))
@click.argument("db", type=click.Path(path_type=Path))
@click.option("--table", default=None, help="Table to replace [default: LANCEDB_TABLE, else documents].")
@click.option(
    "--chunk-size",
    type=click.IntRange(100, 100_000),
    default=layout.DEFAULT_CHUNK_SIZE,
    show_default=True,
    help="Characters per chunk, about.",
)
@click.option("--no-fts", is_flag=True, help="Do not build the full-text (BM25) index.")
@click.option("--allow-empty", is_flag=True, help="Empty the table when DOCS has no documents.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, no summary; warnings still go to stderr.")
def main(
    docs: Path, db: Path, table: str | None, chunk_size: int, no_fts: bool, allow_empty: bool, quiet: bool
) -> None:
    """Index the documents in DOCS (.md, .txt, .html) into the LanceDB database at DB.

    The table is replaced atomically: readers see the old table until the new one is complete.
    """
    logs.configure("WARNING" if quiet else "INFO")
    try:
        resolved = settings.load(os.environ)
        for problem in resolved.warnings:
            log.warning(problem)
        options = Options(table=table or resolved.table, chunk_size=chunk_size, fts=not no_fts, allow_empty=allow_empty)
        with bar(not quiet) as on_progress:
            report = build(docs, db, options, on_progress=on_progress)
    except (IndexerError, stored.StoredSettingsError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not quiet:
        click.echo(summary(report))
