"""Running the plugin in-process with pytester on a private fixtures tree.

The harness reads its data through ``harness.paths``; pointing that module at a private
copy lets a test break or delete files freely, while the plugin runs in this process
(fast, and hooks such as a simulated Ctrl-C can be passed in as plugin objects)."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_runner import private_fixtures

import harness.paths


def private_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, scenario_id: str) -> Path:
    """A private fixtures tree holding one scenario, which the in-process plugin reads."""
    fixtures = private_fixtures(pytester.path, scenario_id)
    monkeypatch.setattr(harness.paths, "_FIXTURES", fixtures)
    monkeypatch.delenv("TOOLNEXUS_CONFORMANCE_FIXTURES", raising=False)
    return fixtures


def run(pytester: pytest.Pytester, *args: str, plugins: list[object] | None = None) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args, plugins=plugins or [], no_reraise_ctrlc=True)
