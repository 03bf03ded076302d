"""`lancelot-init`: store the database folder and API key for later runs.

On a terminal with no options it asks; with `--db`, `--table`, `--api-key-stdin` or `--no-api-key`
it stores what it is given and leaves the rest as it was. It talks to a person on stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import click

from lancelot_schema import credentials, stored
from lancelot_schema.settings import config_dir
from lancelot_server import __version__
from lancelot_server.init import config_store
from lancelot_server.init.flow import (
    Database,
    SetupError,
    check_key,
    choose_table,
    client_config,
    default_table,
    inspect_database,
    mask,
    server_command,
)

PATH, TABLE = "LANCEDB_PATH", "LANCEDB_TABLE"
_KEPT = (PATH, TABLE, credentials.STORE_FIELD)
T = TypeVar("T")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="lancelot-init")
@click.option("--db", metavar="PATH", help="The database folder lancelot-index built; stored without asking.")
@click.option("--table", metavar="NAME", help="The table to search by default (default: documents or the only one).")
@click.option("--api-key-stdin", is_flag=True, help="Read the OpenAI API key from standard input and store it.")
@click.option("--no-api-key", is_flag=True, help="Store no API key (removes a stored one).")
@click.option("--show", is_flag=True, help="Print what is stored, the key masked, and where it is kept.")
@click.option("--forget", is_flag=True, help="Remove the stored settings and API key.")
def main(db: str | None, table: str | None, api_key_stdin: bool, no_api_key: bool, show: bool, forget: bool) -> None:
    """Store the database folder and OpenAI API key that lancelot and lancelot-index use.

    Run it in a terminal and answer the questions, or pass options to run it from a script. What is
    stored is used only when the environment does not set the same thing.
    """
    environ = os.environ
    directory = config_dir(environ)
    storing = db is not None or table is not None or api_key_stdin or no_api_key
    if (show or forget) and (storing or (show and forget)):
        raise click.UsageError("--show and --forget go alone.")
    if api_key_stdin and no_api_key:
        raise click.UsageError("Choose one of --api-key-stdin and --no-api-key.")
    try:
        if show:
            click.echo(describe(directory, environ))
        elif forget:
            config_store.forget_all(directory, environ)
            click.echo(f"Forgot the stored settings and API key ({directory}).")
        elif storing:
            _store_given(directory, environ, db, table, api_key_stdin, no_api_key)
        elif sys.stdin.isatty():
            _ask(directory, environ)
        else:
            raise click.UsageError(
                "Standard input is not a terminal: run lancelot-init in one, or pass "
                "--db PATH [--table NAME] [--api-key-stdin | --no-api-key]."
            )
    except (SetupError, stored.StoredSettingsError, credentials.CredentialsError) as exc:
        raise click.ClickException(str(exc)) from exc


def _store_given(
    directory: Path, environ: Mapping[str, str], db: str | None, table: str | None, key_stdin: bool, no_key: bool
) -> None:
    values = _previous(directory)
    database: Database | None = None
    if db is not None:
        database = _given(lambda: inspect_database(db), "--db")
    elif table is not None:
        if PATH not in values:
            raise click.UsageError("--table needs --db, or a database folder stored before.")
        database = inspect_database(values[PATH])
    if database is not None:
        found, wanted = database, table if table is not None else _kept_table(values, database)
        values[PATH] = str(found.path)
        values[TABLE] = _given(lambda: choose_table(found, wanted), "--table")
    key: str | None = None
    if key_stdin:
        key = _given(lambda: check_key(sys.stdin.read()), "--api-key-stdin")
    _save(directory, environ, values, key, key_stdin or no_key)


def _ask(directory: Path, environ: Mapping[str, str]) -> None:
    values = _previous(directory)
    click.echo(f"Lancelot setup. Your answers are kept in {directory}, never in the database folder.\n")
    database = _ask_database(values.get(PATH))
    if len(database.tables) == 1:
        chosen = database.tables[0]
        click.echo(f"Table: {chosen} (the only one)")
    else:
        click.echo(f"Tables: {', '.join(database.tables)}")
        chosen = click.prompt(
            "Default table", type=click.Choice(database.tables), default=_kept_table(values, database)
        )
    values[PATH], values[TABLE] = str(database.path), chosen
    key = _ask_key()
    _save(directory, environ, values, key, True)


def _ask_database(previous: str | None) -> Database:
    while True:
        answer: str = click.prompt("Database folder (the DB folder given to lancelot-index)", default=previous)
        try:
            return inspect_database(answer)
        except SetupError as exc:
            click.echo(f"  {exc}")


def _ask_key() -> str | None:
    click.echo("An OpenAI API key lets lancelot run vector and hybrid search; without one it uses full-text search.")
    while True:
        answer: str = click.prompt(
            "OpenAI API key (input hidden; press Enter for none)", default="", hide_input=True, show_default=False
        )
        if not answer.strip():
            return None
        try:
            return check_key(answer)
        except SetupError as exc:
            click.echo(f"  {exc}")


def _save(directory: Path, environ: Mapping[str, str], values: dict[str, str], key: str | None, set_key: bool) -> None:
    """Store `key` (when `set_key`: None removes it), then the settings that say where it went."""
    if set_key and key is not None:
        place = config_store.store_api_key(directory, key, environ)
        values[credentials.STORE_FIELD] = place.kind
    elif set_key:
        config_store.forget_api_key(directory, environ)
        values.pop(credentials.STORE_FIELD, None)
    config_store.save_settings(directory, values)
    click.echo("\nSaved.\n")
    click.echo(describe(directory, environ))
    if PATH in values:
        click.echo("\n" + client_config(Path(values[PATH]), values.get(TABLE, default_table(())), server_command()))


def describe(directory: Path, environ: Mapping[str, str]) -> str:
    """What is stored, for a person: the key masked, and where everything is kept."""
    values = stored.load(directory)
    if not values and not credentials.key_file_path(directory).exists():
        return f"Nothing is stored in {directory}. Run lancelot-init to store your settings."
    where = values.get(credentials.STORE_FIELD)
    lines = [
        f"Settings file:   {stored.settings_path(directory)}",
        f"Database folder: {values.get(PATH, '(none)')}",
        f"Table:           {values.get(TABLE, '(default)')}",
        f"API key:         {_describe_key(directory, where)}",
    ]
    overridden = [name for name in (PATH, TABLE, "OPENAI_API_KEY") if environ.get(name, "").strip()]
    if overridden:
        lines.append(f"Set in the environment, so used instead of what is stored: {', '.join(overridden)}")
    return "\n".join(lines)


def _describe_key(directory: Path, where: str | None) -> str:
    try:
        key = credentials.read_api_key(directory, where)
    except credentials.CredentialsError as exc:
        return f"cannot be read. {exc}"
    if key is None:
        return "none stored (full-text search only)"
    if where == credentials.IN_KEYRING:
        import keyring

        return f"{mask(key)}, {config_store.keyring_place(keyring.get_keyring()).label}"
    return f"{mask(key)}, encrypted in {credentials.key_file_path(directory)}"


def _previous(directory: Path) -> dict[str, str]:
    """What was stored before, to keep what this run does not change; a damaged file is started afresh."""
    try:
        values = stored.load(directory)
    except stored.StoredSettingsError as exc:
        click.echo(f"{exc} Starting afresh.", err=True)
        return {}
    return {name: values[name] for name in _KEPT if name in values}


def _kept_table(values: Mapping[str, str], database: Database) -> str:
    previous = values.get(TABLE)
    return previous if previous in database.tables else default_table(database.tables)


def _given(check: Callable[[], T], option: str) -> T:
    """`check()`, its SetupError told as a mistake in `option` (exit status 2)."""
    try:
        return check()
    except SetupError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from exc
