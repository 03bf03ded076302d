"""Keep stdout for MCP messages only, from the first line the server runs; make stdin lines parseable.

Until the SDK's stdio transport claims the real stdout, everything that reaches file descriptor 1 or
`sys.stdout` (a print at import, a library's banner, a native library's log) is sent to stderr.
`ScrubbedLines` sits in front of the transport's reader (see `scrub_line`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, TextIO


class StdoutDiversion:
    """Point fd 1 and `sys.stdout` at stderr; `hand_back()` hands the real stdout back for the transport."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self._saved_fd = os.dup(1)
        self._saved_stdout: TextIO = sys.stdout
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def hand_back(self) -> None:
        # The SDK's stdio transport claims fd 1 for itself and diverts it to stderr again while it serves,
        # so the window in between runs only the transport's own setup.
        sys.stderr.flush()
        os.dup2(self._saved_fd, 1)
        os.close(self._saved_fd)
        sys.stdout = self._saved_stdout


# A JSON string escape of a UTF-16 surrogate (\ud800-\udfff), well-formed pair or not.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_line(line: str) -> str:
    """`line` with every lone surrogate escape in its strings made U+FFFD; anything else untouched.

    JavaScript's JSON.stringify writes a string cut through an emoji as a lone "\\ud83d", which Python
    reads but the SDK's parser refuses; the SDK then drops the request unanswered and the client waits
    forever. Lines without such an escape, and lines that are not JSON, are returned as they are.
    """
    if _SURROGATE_ESCAPE.search(line) is None:
        return line
    try:
        decoded = json.loads(line)
    except ValueError:
        return line
    return json.dumps(_scrub(decoded), ensure_ascii=False) + "\n"


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    if isinstance(value, dict):
        return {_scrub(key): _scrub(item) for key, item in value.items()}
    return value


class ScrubbedLines:
    """An async text file's lines, each through `scrub_line` (what the SDK's stdio transport iterates)."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = lines

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            yield scrub_line(line)
