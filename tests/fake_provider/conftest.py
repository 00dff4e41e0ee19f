"""Fixtures for the fake-provider tests: one running provider per module and a
keep-alive httpx client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from toolnexus_conformance.fake_provider import FakeProvider


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as running:
        yield running
    assert running.internal_errors == []


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    # one client per module: building one loads the CA bundle, and it is
    # thread-safe with a connection pool, so parallel tests can share it too
    with httpx.Client(timeout=5.0) as http:
        yield http
