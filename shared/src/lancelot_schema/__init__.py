"""Shared by Lancelot's indexer and server: table layout, settings, version.

A leaf module: it imports neither lancedb nor mcp and does no I/O at import.
"""

__version__ = "0.1.0"
