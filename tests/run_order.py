"""The order our own suite runs in, read from two markers on the tests themselves.

- ``slow``: a test that takes seconds to minutes (a real port's suite, a subprocess pytest, a
  package index, a differential search). Slow tests are spread evenly through the run, so
  that whichever contiguous share of it a worker is dealt holds its share of them, and no
  worker is left with a queue of them at the end.
- ``late``: a test that reads what another process of the run makes (a background pass
  that starts when collection ends). Late tests go last, so no worker waits for that pass
  while it still has other tests to run.

Under ``-n``, xdist's ``worksteal`` scheduling (tests/conftest.py) deals each worker a
contiguous share of this order and lets an idle worker take half of the busiest worker's
queue, so no worker sits idle while another still has tests queued.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

MARKERS = (
    "slow: takes seconds to minutes; spread evenly through the run (tests/run_order.py)",
    "late: reads what another process of the run makes; queued last (tests/run_order.py)",
)


class Marked(Protocol):
    def get_closest_marker(self, name: str) -> object | None: ...


T = TypeVar("T", bound=Marked)


def ordered(items: Sequence[T]) -> list[T]:
    """``items`` with the slow ones spread evenly from the first place on, the late ones
    last; otherwise in the order given."""
    late = [item for item in items if item.get_closest_marker("late") is not None]
    slow = [item for item in items if item.get_closest_marker("slow") is not None and item not in late]
    ordinary = [item for item in items if item not in late and item not in slow]
    total = len(slow) + len(ordinary)
    order: list[T] = []
    placed = 0
    for place in range(total):
        # the k-th slow test goes at place k * total / len(slow)
        if placed < len(slow) and place * len(slow) >= placed * total:
            order.append(slow[placed])
            placed += 1
        else:
            order.append(ordinary[place - placed])
    return order + late
