"""Garbage-collector settings for the processes the harness owns that make many short-lived
objects: fork servers, and a differential search's workers.

Drawing, running and serving a scenario allocate many objects that die young; with the
default threshold the youngest generation is collected over and over during each scenario.
Collecting it less often takes that work off every scenario. What exists before (modules,
strategies, a loaded shim) is frozen out of the collections, which also keeps a forked
child from touching, and so copying, those pages.

The plugin never calls these in pytest's process: that process belongs to the port
repository whose tests share it (tests/plugin/test_host_state.py).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["YOUNG_GC_THRESHOLD", "fewer_collections", "for_short_lived_objects"]

YOUNG_GC_THRESHOLD = 50_000


def for_short_lived_objects() -> tuple[int, int, int]:
    """For a process the harness started and owns: freeze what exists and collect the
    youngest generation less often; the thresholds before."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_GC_THRESHOLD, *before[1:])
    return before


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """:func:`for_short_lived_objects` for the block only, then the collector as it was: its
    thresholds, and the objects frozen before the block (if any, nothing more is frozen, since
    unfreezing is all or nothing)."""
    before = gc.get_threshold()
    freezes = gc.get_freeze_count() == 0
    if freezes:
        gc.freeze()
    gc.set_threshold(YOUNG_GC_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if freezes:
            gc.unfreeze()
