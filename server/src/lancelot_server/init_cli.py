"""`lancelot-init`: store the database folder and API key for later runs."""

from __future__ import annotations

import click

from lancelot_server import __version__


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="lancelot-init")
def main() -> None:
    """Store the database folder and OpenAI API key that lancelot and lancelot-index use."""
    raise click.ClickException("lancelot-init is not implemented yet")
