"""Start a server command over real stdio pipes with the MCP SDK's client and make tool calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

# What keeps a spawned server away from the real user's stored settings and keychain (see clean_env).
ISOLATION = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "PYTHON_KEYRING_BACKEND")


def isolated(clean_env: dict[str, str], **env: str) -> dict[str, str]:
    """`env` plus the clean_env variables that isolate a server (the SDK passes few variables on)."""
    return {name: clean_env[name] for name in ISOLATION} | env


def call_tools(
    command: str | Path,
    args: list[str],
    env: dict[str, str],
    calls: list[tuple[str, dict[str, Any]]],
    cwd: Path | None = None,
) -> list[CallToolResult]:
    """Spawn `command args` with `env` in `cwd`, make each (tool, arguments) call in turn, close stdin."""

    async def run() -> list[CallToolResult]:
        parameters = StdioServerParameters(command=str(command), args=args, env=env, cwd=cwd)
        with anyio.fail_after(120):
            async with Client(parameters) as client:
                return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)
