"""Fixtures of reference_py's own tests, and of the reference shim's fast HTTP client
(``shims/reference/fast_http``, importable as ``fast_http`` here), which the
``test_http_plain_*`` files hold against httpx."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shims" / "reference"))

try:
    import uvloop
except ImportError:  # a checkout without the harness's dependencies installed
    uvloop = None


@pytest.fixture(params=["asyncio", "uvloop"])
def each_event_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs the test once on asyncio's loop and once on uvloop's, where installed: a loop a
    user may run reference_py on, whose transports are not asyncio's own classes (the fast
    HTTP client's connections meet them there)."""
    if request.param == "uvloop":
        if uvloop is None:
            pytest.skip("uvloop is not installed here")
        run: Callable[[Coroutine[Any, Any, Any]], Any] = uvloop.run
        monkeypatch.setattr(asyncio, "run", run)
    return str(request.param)


@pytest.fixture
def fast_client_installed() -> Iterator[None]:
    """The fast HTTP client installed into reference_py as a forked shim's zygote installs
    it (so the loop maps its errors as httpx's), and httpx the default again afterwards."""
    import fast_http

    from reference_py import transport

    fast_http.install()
    try:
        yield
    finally:
        transport.use_client(None)
