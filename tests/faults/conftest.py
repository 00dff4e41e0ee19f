"""Fixtures of the fault-injection suite (its tools are in faultkit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from faultkit import our_leftovers


@pytest.fixture(autouse=True)
def _no_leftovers_before() -> None:
    # A leftover from an earlier test would be blamed on this one.
    assert not our_leftovers(), f"processes left over before this test: {our_leftovers()}"


@pytest.fixture
def needs_proc() -> None:
    if not Path("/proc/self/environ").exists():
        pytest.skip("the leftover-process census reads /proc (Linux only)")
