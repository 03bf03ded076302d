"""`lancelot-index DOCS DB`: parse, resolve settings once, run the pipeline, print a summary."""

from __future__ import annotations

import click

from lancelot_indexer import __version__


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="lancelot-index")
@click.argument("docs", type=click.Path(file_okay=False, path_type=str))
@click.argument("db", type=click.Path(path_type=str))
def main(docs: str, db: str) -> None:
    """Index the documents in DOCS into the LanceDB database at DB."""
    raise click.ClickException("indexing is not implemented yet")
