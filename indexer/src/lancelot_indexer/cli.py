"""`lancelot-index DOCS DB`: parse, resolve settings once, run the pipeline, print a summary.

With `--embed`, the pipeline gets a `VectorExtension` built from the resolved settings (model, key,
endpoint); the summary then says how many passages were embedded, how many vectors were reused, and at
what cost in requests.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from lancelot_indexer import __version__, log, parameters
from lancelot_indexer.documents import ray_tasks
from lancelot_indexer.documents.collect import DEFAULT_FILE_MEMORY, DEFAULT_FILE_TIMEOUT
from lancelot_indexer.errors import IndexerError
from lancelot_indexer.pipeline import Options, ProgressCallback, Report, build, log_leftovers
from lancelot_indexer.printable import printable
from lancelot_indexer.progress import bar
from lancelot_indexer.summary import embed_summary, summary
from lancelot_indexer.wording import count
from lancelot_schema import about, folders, languages, layout, links, settings, storage, stored

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

    from lancelot_indexer.embedding.local import LocalModel
    from lancelot_indexer.embedding.vectors import VectorExtension


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


STOPPED_BEFORE_WRITING = "Stopped before anything was written: the table was left as it was."
STOPPED_BEFORE_ANY_TABLE = "Stopped before anything was written: no table was made."
STOPPED = "Stopped before anything was written."
STOPPED_WRITING = (
    "Stopped while writing: Lance commits a table whole, so it is either as it was or completely replaced, "
    "never half-written. Run lancelot-index again to be sure it is current."
)


class Stopped(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# Stops asked for. A handler may run inside a finalizer (`__del__`), where Python ignores what it raises: a
# SIGTERM as the readers started once let a run commit and exit 0. A lost stop is raised at the next write.
_asked: list[int] = []


def _stop(signum: int, frame: FrameType | None) -> None:
    _asked.append(signum)
    raise Stopped(signum)


class _NotingStops:
    """`sys.unraisablehook` noting a stop a finalizer swallowed (Ctrl-C's too), without a traceback; else `hook`."""

    def __init__(self, hook: Callable[[UnraisableHookArgs], object]) -> None:
        self.hook = hook

    def __call__(self, unraisable: UnraisableHookArgs) -> object:
        if not issubclass(unraisable.exc_type, KeyboardInterrupt):
            return self.hook(unraisable)
        _asked.append(getattr(unraisable.exc_value, "signum", signal.SIGINT))
        return None


def _stop_if_asked() -> None:
    """Raise the stop that a finalizer swallowed, if one did."""
    if _asked:
        raise Stopped(_asked[0])


def _stopped_before_writing(target: tuple[storage.Location, str] | None) -> str:
    """What a stop before the first write leaves: the table as it was, or no table (a stat says which)."""
    if target is None or not target[0].local:
        return STOPPED  # no request to a bucket on the way out
    location, table = target
    there = folders.is_table(location.path / f"{table}{folders.TABLE_SUFFIX}")
    return STOPPED_BEFORE_WRITING if there else STOPPED_BEFORE_ANY_TABLE


def _kept(staged: int) -> str:
    """What a stop before the commit keeps of the vectors made (`writing/staged.py`)."""
    return f" The vectors of the {count(staged, 'passage')} embedded so far are kept: the next run embeds the rest."


def _log_level(quiet: bool, watch: bool) -> str:
    """The log's level when --log-level is not given. On a terminal the summary (or --watch's lines) says what
    the run did, so only warnings are logged; elsewhere (CI, a file) the log is the record, at INFO; --quiet
    and --watch keep it to warnings (skipped files among them)."""
    return "WARNING" if quiet or watch or sys.stderr.isatty() else "INFO"


def _local_model(embed: str | None, resolved: settings.Settings, threads: int | None) -> LocalModel | None:
    """The model `--embed local[:MODEL]` names, loaded once for every build of the run (fetched when missing)."""
    if embed is None or embed == parameters.ENDPOINT:
        if threads is not None:
            raise click.UsageError(
                "--embed-threads is for --embed local: the endpoint's requests are --embed-concurrency"
            )
        return None
    from lancelot_indexer.embedding.local import LocalModel

    where = dataclasses.replace(resolved.local, download=True)
    model = embed.partition(":")[2] or None
    return LocalModel.load(
        model, where, threads=threads or os.cpu_count() or 1, say=lambda line: click.echo(line, err=True)
    )


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="lancelot-index")
@click.argument("docs", type=click.Path(file_okay=False), callback=parameters.docs)
@click.argument("db", callback=parameters.database)
@click.option(
    "--table",
    default=None,
    callback=parameters.checked(layout.table_name_problem),
    help="Table to replace [default: LANCEDB_TABLE, else documents].",
)
@click.option(
    "--description",
    metavar="TEXT",
    callback=parameters.description,
    help=f"What the documents are, in a line of at most {about.MAX_DESCRIPTION} characters (e.g. 'PostgreSQL 15 "
    "manual'): what the server tells an assistant about the table. Kept by later rebuilds until given again "
    "[default: the table's, else a Sphinx or MkDocs build's name, the documents' common title suffix, DOCS's name].",
)
@click.option(
    "--passage-size",
    "chunk_size",
    type=click.IntRange(100, 100_000),
    default=layout.DEFAULT_CHUNK_SIZE,
    show_default=True,
    help="About how many characters go into one passage.",
)
# The earlier name of --passage-size, still accepted; the table stamps it as chunk_size either way.
@click.option("--chunk-size", "old_chunk_size", type=click.IntRange(100, 100_000), default=None, hidden=True)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Leave out files and folders whose path under DOCS, or name, matches GLOB (repeatable), "
    "e.g. --exclude drafts --exclude '*.min.html'.",
)
@click.option(
    "--keep-generated",
    is_flag=True,
    help="Index the pages that documentation generators make too (Sphinx, MkDocs, Doxygen, Javadoc: indexes, "
    "search and 404 pages, tables of contents, copies of sources), which are left out by default.",
)
@click.option(
    "--link",
    metavar="TEMPLATE",
    callback=parameters.checked(links.template_problem),
    help="Give every passage a link: a URL with {path}, {stem}, and after '#' {anchor}, {line}, {line_end} or "
    "{page} (PDF), e.g. 'https://docs.example.com/{path}#{anchor}'.",
)
@click.option(
    "--language",
    default=languages.DEFAULT,
    show_default=True,
    callback=parameters.language,
    metavar="NAME",
    help="How the full-text index splits words: english (stemmed, stop words left out), none (whole words, no "
    "stemming), another stemmed language ("
    + ", ".join(name for name in languages.NAMES if name not in (languages.DEFAULT, languages.NONE, languages.CJK))
    + "), or cjk for Chinese, Japanese and Korean (word segmentation).",
)
@click.option(
    "--file-timeout",
    type=click.FloatRange(0, 86_400, min_open=True),
    default=DEFAULT_FILE_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Stop reading a file that takes longer than this and skip it, with the reason in the summary.",
)
@click.option(
    "--file-memory",
    type=click.IntRange(64, 1_048_576),
    default=DEFAULT_FILE_MEMORY,
    show_default=True,
    metavar="MB",
    help="Skip a file whose reading needs more memory than this, with the reason in the summary.",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value=ray_tasks.LOCAL,
    callback=parameters.checked(ray_tasks.address_problem),
    metavar="[ADDRESS]",
    help="Read the documents in Ray tasks (the 'ray' extra): on the cluster at ADDRESS (auto on one of its "
    "nodes, or ray://HEAD:10001), or without ADDRESS on a Ray started here. Give it after DOCS and DB.",
)
@click.option("--no-fts", is_flag=True, help="Do not build the full-text (BM25) index.")
@click.option("--allow-empty", is_flag=True, help="Empty the table when DOCS has no documents.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, no summary; warnings still go to stderr.")
@click.option(
    "--embed",
    is_flag=False,
    flag_value=parameters.ENDPOINT,
    callback=parameters.checked(parameters.embed_problem),
    metavar="[local[:MODEL]]",
    help="Store a vector per passage, from EMBEDDING_MODEL through the OpenAI API or OPENAI_BASE_URL; with local, "
    "from a model run here (the 'local' extra): MODEL a name or a folder, default all-MiniLM-L6-v2. Vectors of "
    "unchanged passages are reused. Give it after DOCS and DB.",
)
@click.option(
    "--embed-threads",
    type=click.IntRange(1, 64),
    default=None,
    help="With --embed local: the threads the model runs on [default: every core].",
)
@click.option(
    "--embed-concurrency",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Embedding requests in flight at once.",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default=None,
    help="Write structured log lines at this level and above to stderr [default: WARNING on a terminal, where "
    "the summary says the rest; elsewhere INFO, or WARNING with --quiet or --watch].",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Keep running: after the build, rebuild (incrementally) each time the documents change, once the "
    "changes have settled for half a second; one line per rebuild. Ctrl-C stops.",
)
def main(
    docs: Path | str,
    db: str,
    table: str | None,
    description: str | None,
    chunk_size: int,
    old_chunk_size: int | None,
    exclude: tuple[str, ...],
    keep_generated: bool,
    link: str | None,
    language: str,
    file_timeout: float,
    file_memory: int,
    ray_address: str | None,
    no_fts: bool,
    allow_empty: bool,
    quiet: bool,
    embed: str | None,
    embed_threads: int | None,
    embed_concurrency: int,
    log_level: str | None,
    watch: bool,
) -> None:
    """Index the documents in DOCS (.md, .txt, .html, .rst, .pdf, .docx; a folder, or s3://BUCKET/PREFIX/) into
    the LanceDB database at DB: a folder, or a URI on object storage (s3://BUCKET/PREFIX, gs://…, az://…).

    The table is replaced atomically: readers see the old table until the new one is complete.
    """
    # --embed logs retries through structlog directly: set it up at once then.
    log.configure(log_level or _log_level(quiet, watch), now=embed is not None)
    # CI stops a job with SIGTERM: the same orderly stop as Ctrl-C (workers ended, a word on the table).
    signal.signal(signal.SIGTERM, _stop)
    _asked.clear()  # this run's (a process may call main again)
    if not isinstance(sys.unraisablehook, _NotingStops):
        sys.unraisablehook = _NotingStops(sys.unraisablehook)
    writing = False
    target: tuple[storage.Location, str] | None = None  # the database and table, once known
    extension: VectorExtension | None = None  # the latest build's

    def started_writing() -> None:
        nonlocal writing
        _stop_if_asked()
        writing = True

    try:
        resolved = settings.load(os.environ)
        for problem in resolved.warnings:
            log.warning(problem)
        try:
            location = storage.locate(db, resolved.storage)
            documents = docs if isinstance(docs, Path) else storage.locate(docs, resolved.storage)
        except storage.LocationError as exc:
            raise click.ClickException(str(exc)) from None
        # A folder as written (the summary names it so); a file:// URI names its folder.
        database: Path | storage.Location = (
            location if not location.local else (location.path if "://" in db else Path(db))
        )
        if table is None:
            table = resolved.table
            if mistake := layout.table_name_problem(table):
                raise click.ClickException(f"LANCEDB_TABLE {mistake}")
        target = (location, table)
        options = Options(
            table=table,
            chunk_size=chunk_size if old_chunk_size is None else old_chunk_size,
            fts=not no_fts,
            allow_empty=allow_empty,
            exclude=tuple(exclude),
            keep_generated=keep_generated,
            link=link,
            language=language,
            file_timeout=file_timeout,
            file_memory=file_memory,
            description=description,
            ray=ray_address,
        )

        local = _local_model(embed, resolved, embed_threads)

        def vectors(on_progress: ProgressCallback | None) -> VectorExtension | None:
            """The --embed extension, a new one per build (its report counts one build)."""
            if embed is None:
                return None
            # pyarrow comes with it: imported only when asked for, as the pipeline does.
            from lancelot_indexer.embedding.vectors import VectorExtension

            nonlocal extension
            extension = VectorExtension(
                model=resolved.embedding_model,
                api_key=resolved.api_key,
                base_url=resolved.base_url,
                concurrency=embed_concurrency,
                on_progress=on_progress,
                local=local,
            )
            return extension

        if watch:
            from lancelot_indexer import watch as watching

            if not isinstance(documents, Path):
                raise click.UsageError(
                    "--watch follows a folder on this machine: run lancelot-index again for a bucket."
                )
            folder = documents

            def build_once() -> Report:
                nonlocal writing
                writing = False  # what a stop says is about this rebuild
                return build(folder, database, options, extension=vectors(None), on_write=started_writing)

            shown = click.echo if not quiet else lambda text: None
            watching.run(
                folder, database, options, out=shown, err=lambda text: click.echo(text, err=True), build_once=build_once
            )
            # A stop while waiting: nothing was being written.
            shown("Stopped watching.")
            return
        with bar(not quiet) as on_progress:
            report = build(
                documents,
                database,
                options,
                on_progress=on_progress,
                extension=vectors(on_progress),
                on_write=started_writing,
            )
        _stop_if_asked()
    except (IndexerError, stored.StoredSettingsError) as exc:
        # A name in the message (DOCS, DB) is shown printable: it cannot add a line after "Error:".
        raise click.ClickException(printable(str(exc))) from exc
    except KeyboardInterrupt as stop:
        said = STOPPED_WRITING if writing else _stopped_before_writing(target)
        click.echo(said + (_kept(extension.staged) if extension is not None and extension.staged else ""), err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        # At once: the interpreter's own shutdown would wait on the worker pool's threads (see collect._pool).
        os._exit(128 + getattr(stop, "signum", signal.SIGINT))
    if quiet:
        log_leftovers(report)  # no summary says them
        return
    click.echo(summary(report))
    if extension is not None and extension.report is not None:
        click.echo(embed_summary(extension.report))
