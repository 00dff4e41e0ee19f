"""Fixtures for the plugin's end-to-end tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_runner import SCENARIO


@pytest.fixture
def scenario() -> Path:
    return SCENARIO
