"""`-n auto` for our own suite starts one worker more than the cores (tests/worker_count.py)."""

from __future__ import annotations

import pytest
from worker_count import OVERRIDE, auto_workers
from xdist.plugin import pytest_xdist_auto_num_workers as xdist_count


def test_one_worker_more_than_the_cores() -> None:
    assert auto_workers(2, None) == 3
    assert auto_workers(16, None) == 17


def test_xdists_override_is_the_count_used() -> None:
    assert auto_workers(2, "2") == 2


def test_the_suites_auto_hook_adds_one_to_xdists_count(request: pytest.FixtureRequest,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    config = request.config
    if not config.pluginmanager.hasplugin("xdist"):
        pytest.skip("xdist is not loaded in this run (-p no:xdist): there is no -n auto to count")
    monkeypatch.delenv(OVERRIDE, raising=False)
    assert config.hook.pytest_xdist_auto_num_workers(config=config) == xdist_count(config) + 1
    monkeypatch.setenv(OVERRIDE, "5")
    assert config.hook.pytest_xdist_auto_num_workers(config=config) == 5
