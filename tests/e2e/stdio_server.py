"""Run `lancelot` as a subprocess and talk to it over real stdio pipes with the MCP SDK's client."""

from __future__ import annotations

import sys
import tempfile
import threading
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


def searches_during_rebuilds(
    docs: Path, db: Path, rebuild: Callable[[], None], *, searches: int = 25, rebuilds: int = 0
) -> list[Any]:
    """Search `db` (built from `tests.server.corpus`'s documents) through a real stdio server while a thread
    rebuilds it over and over, adding or removing `docs/extra.md` before each `rebuild()`: at least `searches`
    searches, and on until `rebuilds` rebuilds are done. Every search's result, each checked whole: no error,
    and the hits of the table before a rebuild or after it, never of half a table."""
    stop, done = threading.Event(), []

    def again() -> None:
        extra = docs / "extra.md"
        while not stop.is_set():
            if extra.exists():
                extra.unlink()
            else:
                extra.write_text("# Extra\n\nThe workshop lends pumps.\n", encoding="utf-8")
            rebuild()
            done.append(True)

    async def session(client: Client) -> list[Any]:
        results = []
        while len(results) < searches or (len(done) < rebuilds and len(results) < 2000):
            results.append(await call(client, "lancedb_search", {"query": "workshop", "mode": "text", "limit": 50}))
        return results

    writer = threading.Thread(target=again)
    writer.start()
    try:
        results = serve(db, session)
    finally:
        stop.set()
        writer.join()
    assert len(done) >= rebuilds
    for result in results:
        assert not result.is_error, result.content[0].text
        sources = {hit["source"] for hit in result.structured_content["hits"]}
        assert "hours.html" in sources and sources <= {"hours.html", "extra.md"}
    return results
