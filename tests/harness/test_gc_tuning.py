"""gc_tuning: the settings hold inside the block and are put back after it, even when the
block raises (a differential worker goes on in the same process after its search)."""

from __future__ import annotations

import gc

import pytest

from toolnexus_conformance.helpers.gc_tuning import YOUNG_GC_THRESHOLD, fewer_collections


def test_the_block_runs_with_fewer_collections_and_the_settings_come_back() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold() == (YOUNG_GC_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > frozen
        raise RuntimeError("the search failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


def test_objects_the_process_froze_before_the_block_stay_frozen() -> None:
    kept = [object() for _ in range(10)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with fewer_collections():
            pass
        assert gc.get_freeze_count() == frozen, "the block unfroze what the process had frozen itself"
    finally:
        gc.unfreeze()
    del kept
