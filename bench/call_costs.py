"""What one warm MCP call costs over stdio, by kind, and the client's check of a search reply, by schema shape.

    .venv/bin/python -m bench.call_costs [DB] [CALLS]

DB defaults to bench-work/search/peer-db (the PostgreSQL manual, as `scripts/bench-search --peer` builds it).
One `lancelot` spawned over stdio and driven by the MCP SDK's client; after a warm-up of 5, CALLS (default 60)
of each: a ping, `lancedb_version`, a text search for one hit and for ten. Then the `jsonschema` check the SDK's
client makes of the last ten-hit reply, against the published (compact) output schema and against pydantic's
own schema of the same reply type (`schemas.compact`'s after and before), in turn. Medians in ms.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench import common, peer


async def median_ms(call: Callable[[], Awaitable[Any]], count: int) -> float:
    for _ in range(5):
        await call()
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return common.median_ms(samples)


def checks_ms(schemas: list[dict[str, Any]], reply: Any) -> list[float]:
    """The median time of `jsonschema`'s check of `reply` against each schema, the schemas taken in turn."""
    import jsonschema

    validators = [jsonschema.validators.validator_for(schema)(schema) for schema in schemas]
    samples: list[list[float]] = [[] for _ in schemas]
    for _ in range(300):
        for validator, taken in zip(validators, samples, strict=True):
            started = time.perf_counter()
            list(validator.iter_errors(reply))
            taken.append(time.perf_counter() - started)
    return [common.median_ms(taken) for taken in samples]


async def main() -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    from pydantic import TypeAdapter

    from lancelot_server.replies import SearchReply

    db = sys.argv[1] if len(sys.argv) > 1 else str(peer.database())
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    server = common.stdio_server({"LANCEDB_PATH": db})
    search = {"query": "connection pooling", "mode": "text"}
    async with stdio_client(server) as streams, ClientSession(*streams) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        print(f"ping: {await median_ms(session.send_ping, count):.2f} ms")
        version = await median_ms(lambda: session.call_tool("lancedb_version", {}), count)
        print(f"lancedb_version: {version:.2f} ms")
        for limit in (1, 10):
            took = await median_ms(
                lambda limit=limit: session.call_tool("lancedb_search", {**search, "limit": limit}), count
            )
            print(f"lancedb_search, {limit} hit(s): {took:.2f} ms")
        reply = (await session.call_tool("lancedb_search", {**search, "limit": 10})).structured_content
    published = tools["lancedb_search"].output_schema or {}
    compact, original = checks_ms([published, TypeAdapter(SearchReply).json_schema()], reply)
    print(f"client's check of a ten-hit reply: published schema {compact:.2f} ms, pydantic's {original:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
