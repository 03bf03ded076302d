"""Where a warm search's time goes before the pipes: the search itself, the SDK around it, the client's check.

    .venv/bin/python -m bench.warm_parts [DB] [ROUNDS]

DB defaults to bench-work/search/peer-db (the PostgreSQL manual, as `scripts/bench-search --peer` builds it).
After one warm-up pass, each round sends bench-http's 16 queries (text mode, `limit` 10) twice: to
`Tools.search` in this process, and through the MCP SDK's in-memory client to the server `app.build_server`
makes (the SDK's dispatch, argument validation, reply models, and its client checking the structured reply
against the tool's output schema). It also times that check alone, `jsonschema` on the last reply. Medians
in ms; what is left of `scripts/bench-search --peer`'s warm median is the stdio transport of both processes.
"""

from __future__ import annotations

import asyncio
import sys
import time

from bench import common, peer
from bench.common import POSTGRES_QUERIES


def median_ms(samples: list[float]) -> str:
    return f"{common.median_ms(samples):.2f} ms"


async def main() -> None:
    import jsonschema
    from mcp import Client

    from lancelot_schema import logs
    from lancelot_server import app
    from lancelot_server.storage.store import Store

    db = sys.argv[1] if len(sys.argv) > 1 else str(peer.database())
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    logs.configure("WARNING")
    tools = common.in_process_tools({"LANCEDB_PATH": db})
    settings = tools.settings
    server = app.build_server(settings, Store(settings.db_path, settings.storage))
    arguments = {"mode": "text", "limit": 10}
    direct: list[float] = []
    through_sdk: list[float] = []
    async with Client(server) as client:
        schema = next(tool for tool in (await client.list_tools()).tools if tool.name == "lancedb_search").output_schema
        for query in POSTGRES_QUERIES:  # warm-up: both tables open, both paths run once
            tools.search(query, **arguments)
            reply = await client.call_tool("lancedb_search", {"query": query, **arguments})
        for _ in range(rounds):
            for query in POSTGRES_QUERIES:
                started = time.perf_counter()
                tools.search(query, **arguments)
                direct.append(time.perf_counter() - started)
                started = time.perf_counter()
                reply = await client.call_tool("lancedb_search", {"query": query, **arguments})
                through_sdk.append(time.perf_counter() - started)
    validator = jsonschema.validators.validator_for(schema)(schema)
    checks = [common.timed(lambda: list(validator.iter_errors(reply.structured_content))) for _ in range(50)]
    tools.close()
    print(f"Tools.search, in this process: {median_ms(direct)}")
    print(f"through the SDK's in-memory client: {median_ms(through_sdk)}")
    print(f"the client's output-schema check of one reply alone (jsonschema): {median_ms(checks)}")


if __name__ == "__main__":
    asyncio.run(main())
