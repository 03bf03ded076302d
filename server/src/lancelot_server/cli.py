"""`lancelot`: the MCP server over stdio (default) or Streamable HTTP (`--http`)."""

from __future__ import annotations

import click

from lancelot_server import __version__


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="lancelot")
def main() -> None:
    """Serve Lancelot's read-only search tools to an MCP client over stdio."""
    raise click.ClickException("the server is not implemented yet")
