"""Run a command on a real pseudo-terminal (progress bars draw only there) and collect what it shows."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_in_terminal(
    command: Sequence[str | Path], env: Mapping[str, str] | None = None, timeout: float = 60
) -> tuple[int, str]:
    """(exit status, everything written to the terminal). Opened without forking this (lance-loaded) process."""
    primary, secondary = os.openpty()
    process = subprocess.Popen(
        list(command), stdin=secondary, stdout=secondary, stderr=secondary, close_fds=True, env=env
    )
    os.close(secondary)
    seen = b""
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the terminal closed
            break
        if not data:
            break
        seen += data
    os.close(primary)
    return process.wait(timeout=timeout), seen.decode("utf-8", "replace")
