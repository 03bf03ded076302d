"""Run `lancelot` as a subprocess and talk to it over real stdio pipes with the MCP SDK's client."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

LANCELOT = str(Path(sys.executable).parent / "lancelot")
T = TypeVar("T")


def parameters(db: Path | str | None, cwd: Path | None = None, **environ: str) -> StdioServerParameters:
    # XDG_CONFIG_HOME points at nothing, so no setting stored by a real lancelot-init leaks in.
    env = {"XDG_CONFIG_HOME": str(Path(db or "/nonexistent").absolute().parent / "no-config"), **environ}
    if db is not None:
        env["LANCEDB_PATH"] = str(db)
    return StdioServerParameters(command=LANCELOT, env=env, cwd=cwd)


def serve(db: Path | str | None, session: Callable[[Client], Awaitable[T]], **environ: str) -> T:
    """Spawn the server, run `session(client)`, close stdin (the server then exits) and return the result."""

    async def run() -> T:
        with anyio.fail_after(120):
            async with Client(parameters(db, **environ)) as client:
                return await session(client)

    return anyio.run(run)


def serve_logged(
    db: Path | str | None, session: Callable[[Client], Awaitable[T]], cwd: Path | None = None, **environ: str
) -> tuple[T, str]:
    """As `serve`, with the server started in `cwd`; also what it wrote to stderr."""

    async def run(errors: Any) -> T:
        with anyio.fail_after(120):
            async with Client(stdio_client(parameters(db, cwd, **environ), errlog=errors)) as client:
                return await session(client)

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
        result = anyio.run(run, errors)
        errors.seek(0)
        return result, errors.read()


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> Any:
    return await client.call_tool(name, arguments or {})
