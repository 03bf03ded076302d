"""The order the suite's tests are handed out in: those that mostly wait, then the groups, largest first.

xdist hands out work in the order collected (with `--no-loadscope-reorder`), and what runs last runs with
nothing beside the suite. A module marked `waits` spends most of its time waiting (a token file's recheck, a
lease running out, a bucket slowed down), not computing: run first, it waits while the checks beside the suite
use the CPU; run last, as its place in the alphabet had it, it left the two cores idle (docs/decisions.md,
"The suite's CPU, fourth pass"). Then the xdist groups, the largest first (what xdist's own reordering did):
a group runs whole on one worker, and a large one handed out late would end the run alone. Whole modules are
marked `waits`, so that a module's tests stay together and its fixtures are set up once.
"""

from __future__ import annotations

from collections import Counter

import pytest


def groups(item: pytest.Item) -> str:
    """The item's xdist groups as xdist names them ("" for none)."""
    marks = item.iter_markers("xdist_group")
    return "_".join(sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")) for mark in marks}))


def handout_order(items: list[pytest.Item]) -> None:
    """The tests marked `waits`, then the grouped ones by group, the largest group first, then the rest; each
    part in the order collected (the same on every worker)."""
    named = {id(item): groups(item) for item in items}
    sizes = Counter(name for name in named.values() if name)

    def place(item: pytest.Item) -> tuple[int, int, str]:
        if item.get_closest_marker("waits") is not None:
            return (0, 0, "")
        name = named[id(item)]
        return (1, -sizes[name], name) if name else (2, 0, "")

    items.sort(key=place)
