"""Fixtures for the shim transport tests (their tools are in transportkit.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from transportkit import faux_command

from toolnexus_conformance.shim.process import ShimProcess


@pytest.fixture
def faux() -> Callable[..., list[str]]:
    return faux_command


@pytest.fixture
def shim() -> Iterator[ShimProcess]:
    process = ShimProcess()
    yield process
    process.close()
