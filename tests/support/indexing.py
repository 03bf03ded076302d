"""The real `lancelot-index` run in the test process, for tests that only need what it builds.

Its entry point (`lancelot_indexer.cli.main`) with the same arguments, without the start of an interpreter
that imports Lance for each run (docs/decisions.md, "The suite's CPU"). What the command sets for its process
is put back after it: the SIGTERM handler, the environment it was given, logging (structlog, the root
logger and the indexer's own level, which a later test using the pipeline as a library would otherwise
inherit). Tests about the command itself (exit codes, output, signals, locks between processes) run it as
a subprocess instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from tests.support.logging_kept import logging_kept


@contextlib.contextmanager
def _as_it_was(env: Mapping[str, str] | None) -> Iterator[None]:
    from lancelot_indexer import log

    handler = signal.getsignal(signal.SIGTERM)
    indexer_log = log._pending, log._threshold  # the module's only state, which `configure` sets
    before = {name: os.environ.get(name) for name in env or {}}
    # The CLI reads its settings from os.environ, once, at its start; nothing else in this process reads them.
    os.environ.update(env or {})
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        log._pending, log._threshold = indexer_log
        signal.signal(signal.SIGTERM, handler)


def run_index(*arguments: str | Path, env: Mapping[str, str] | None = None) -> None:
    """`lancelot-index ARGUMENTS` in this process, with `env` added to the environment for its run; fail the
    test with the command's message (as it would print it after "Error:") if it refuses or fails."""
    import click

    from lancelot_indexer import cli

    args = [str(argument) for argument in arguments]
    try:
        with logging_kept(), _as_it_was(env):
            cli.main.main(args, prog_name="lancelot-index", standalone_mode=False)
    except click.ClickException as exc:
        message = exc.format_message()
    else:
        return
    pytest.fail(f"lancelot-index {' '.join(args)}: Error: {message}", pytrace=False)
