"""Fixtures of reference_py's own tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

try:
    import uvloop
except ImportError:  # a checkout without the harness's dependencies installed
    uvloop = None


@pytest.fixture(params=["asyncio", "uvloop"])
def each_event_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs the test once on asyncio's loop and once on uvloop's, the loop the reference shim
    runs reference_py on (shims/reference/shim.py): its plain HTTP client meets transports
    that are not asyncio's own classes there."""
    if request.param == "uvloop":
        if uvloop is None:
            pytest.skip("uvloop is not installed: the reference shim runs on asyncio's loop here")
        run: Callable[[Coroutine[Any, Any, Any]], Any] = uvloop.run
        monkeypatch.setattr(asyncio, "run", run)
    return str(request.param)
