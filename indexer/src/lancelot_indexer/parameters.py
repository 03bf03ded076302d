"""The command's parameters as click reads them, refused in their own words (`click.BadParameter`) before
anything runs: DOCS and DB located, --embed, --language and --description checked, and any other value by the
check its own module gives (`checked`: --table, --link, --ray)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from lancelot_schema import about, languages, storage


def located(value: str) -> storage.Location:
    # An empty argument (an unset "$DB" in a script) would otherwise mean the current folder.
    if not value.strip():
        raise click.BadParameter("is empty; name a folder (use . for the current one).")
    # A URI is a URI: never a local folder named `s3:` (what Path would make of s3://bucket/db).
    try:
        return storage.locate(value)
    except storage.LocationError as exc:
        raise click.BadParameter(str(exc)) from None


def docs(ctx: click.Context, param: click.Parameter, value: str) -> Path | str:
    """A folder, or the URI of documents on a bucket (located again once the settings are resolved)."""
    location = located(value)
    if not location.local:
        if location.scheme != "s3":
            raise click.BadParameter(
                f"{location} is on a store documents are not read from: give a folder or s3://BUCKET/PREFIX/ "
                f"(or copy them here first, for example with `gcloud storage rsync` or `azcopy sync`)."
            )
        return value
    return location.path if "://" in value else Path(value)


def database(ctx: click.Context, param: click.Parameter, value: str) -> str:
    located(value)  # refused at once when it names no place; located again once the settings are resolved
    return value


def checked(
    problem_of: Callable[[str], str | None],
) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A callback that refuses a value in the words of `problem_of` (None: no problem)."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None and (problem := problem_of(value)):
            raise click.BadParameter(problem)
        return value

    return check


ENDPOINT = "endpoint"  # --embed without a value: the OpenAI-compatible endpoint


def embed_problem(value: str) -> str | None:
    if value == ENDPOINT or value == "local" or (value.startswith("local:") and value != "local:"):
        return None
    return (
        f"takes local or local:MODEL, or no value for the endpoint, not {value!r} "
        "(give --embed after DOCS and DB, or DOCS is taken for its value)"
    )


def language(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if problem := languages.problem(value):
        raise click.BadParameter(problem)
    return languages.canonical(value) or languages.DEFAULT


def description(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and (problem := about.problem(value)):
        raise click.BadParameter(problem)
    return value.strip() if value is not None else None
