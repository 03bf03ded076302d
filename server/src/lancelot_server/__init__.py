"""lancelot: a read-only MCP server over a LanceDB table.

Imports nothing heavy: cold start matters on AWS Lambda.
"""

__version__ = "0.1.0"
