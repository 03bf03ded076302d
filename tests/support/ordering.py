"""The order the suite's tests are handed out in: those that mostly wait first.

A module marked `waits` spends most of its time waiting (a token file's recheck, a lease running out, a bucket
slowed down), not computing. With `-n`, xdist hands out tests in the order collected, and what runs last runs
with nothing beside it: waiting there left the two cores idle (the run's last half-minute, docs/decisions.md,
"The suite's CPU, fourth pass"). Run first, such a module waits while the checks beside the suite use the CPU.
Whole modules are marked, so that a module's tests stay together and its fixtures are set up once.
"""

from __future__ import annotations

import pytest


def waiting_first(items: list[pytest.Item]) -> None:
    """Put the tests marked `waits` first, each part keeping its order (the same on every worker)."""
    items.sort(key=lambda item: item.get_closest_marker("waits") is None)
