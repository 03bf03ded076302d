"""The tools' schemas as clients read them: output schemas compacted, input schemas strict. Plain JSON Schema
and pydantic, no MCP SDK: `app.py` applies them to the tools it publishes."""
