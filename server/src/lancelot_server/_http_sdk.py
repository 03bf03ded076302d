"""TEMPORARY: the MCP SDK pieces HTTP and Lambda need. Moves into `app.py` (the one module that imports
`mcp`) as soon as that module exists; nothing else may import `mcp`.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer as MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

# Every MCP-Protocol-Version a client may send: the handshake era and the stateless 2026 era.
PROTOCOL_VERSIONS: tuple[str, ...] = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)


def http_endpoint(server: MCPServer) -> StreamableHTTPSessionManager:
    """A fresh stateless Streamable HTTP endpoint for `server` that answers each POST with one JSON object.

    Use it as `async with endpoint.run(): await endpoint.handle_request(scope, receive, send)`. The
    SDK's own Host/Origin checks are off: `lancelot_server.guard` does them, with our statuses, in
    front of it. Cheap enough to build per Lambda invocation, which the SDK needs (its session
    manager runs once; python-sdk #3121).
    """
    server.streamable_http_app(
        json_response=True,
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return server.session_manager
