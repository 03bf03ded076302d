"""Keep stdout for MCP messages only, from the first line the server runs.

Until the SDK's stdio transport claims the real stdout, everything that reaches file descriptor 1 or
`sys.stdout` (a print at import, a library's banner, a native library's log) is sent to stderr.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO


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
