"""Fixtures for the plugin's end-to-end tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from inprocess import PluginRunner
from plugin_runner import SCENARIO


@pytest.fixture
def scenario() -> Path:
    return SCENARIO


@pytest.fixture
def run_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> PluginRunner:
    """Run the plugin in-process from the repository root: ``run_plugin(*args, fixtures=None)``."""
    return PluginRunner(pytester, monkeypatch)
