"""Fixtures of reference_py's own tests, and of the reference shim's fast HTTP client
(``shims/reference/fast_http``, importable as ``fast_http`` here), which the
``test_http_plain_*`` files hold against httpx."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shims" / "reference"))


@pytest.fixture
def each_event_loop() -> str:
    """The event loop the test runs on: asyncio's own (the reference shim runs on it; no
    other loop is a dependency of the harness)."""
    return "asyncio"


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
