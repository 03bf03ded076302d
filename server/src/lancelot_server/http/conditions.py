"""Log lines for conditions that can repeat thousands of times a second: one line, never a flood.

When the process runs out of file descriptors, asyncio reports every failed accept (up to the listen
backlog of them per wake-up, each with a traceback); slow clients cut off or connections refused come in
the same numbers. A `Condition` turns each into one line when it starts, at most one line per `every`
seconds while it lasts (with how many times it happened meanwhile), and one line when it passes (`EVENT_ended`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

log = structlog.get_logger("lancelot.http")

EVERY_S = 60.0
# A condition has ended once this long has passed since it last occurred and the good case is seen.
QUIET_S = 1.0


class Condition:
    """One kind of trouble, logged as `event` at `level` (a structlog method name), at most two lines
    (`EVENT`, `EVENT_ended`) every `every` seconds however often it occurs or comes and goes."""

    def __init__(
        self,
        event: str,
        level: str = "warning",
        every: float = EVERY_S,
        quiet: float = QUIET_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.event = event
        self.level = level
        self.every = every
        self.quiet = quiet
        self.clock = clock
        self.since: float | None = None  # when the condition began; None while it does not hold
        self.last = 0.0  # when it last occurred
        self.times = 0  # how often since it began
        self.unreported = 0  # how often since the last line
        self.reported_at: float | None = None

    def occurred(self, **fields: Any) -> None:
        """The condition happened (again): a line unless the last one is less than `every` s old."""
        now = self.clock()
        if self.since is None:
            self.since, self.times = now, 0
        self.last = now
        self.times += 1
        self.unreported += 1
        if self.reported_at is not None and now - self.reported_at < self.every:
            return
        getattr(log, self.level)(self.event, times=self.unreported, **fields)
        self.unreported = 0
        self.reported_at = now

    def passed(self) -> None:
        """The good case (an accept that worked): the condition ends if it has been quiet for `quiet` s.

        The end gets a line when the condition's start or continuation got one; otherwise its count
        goes into the next line.
        """
        if self.since is None or self.clock() - self.last < self.quiet:
            return
        if self.reported_at is not None and self.reported_at >= self.since:
            log.info(f"{self.event}_ended", times=self.times, seconds=round(self.last - self.since, 1))
        self.since = None
