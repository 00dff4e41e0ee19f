"""Fixtures of the cross-port resume tests (their tools are in cross_runner.py)."""

from __future__ import annotations

import pytest
from cross_runner import InProcess


@pytest.fixture
def run_inprocess(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> InProcess:
    """``pytest ARGS`` from the repository root, in this process: ``run_inprocess(*args)``."""
    return InProcess(pytester, monkeypatch)
