"""`-n auto` for our own suite starts one worker more than the cores (tests/worker_count.py);
the conformance suite run alone keeps one worker per core."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from worker_count import OVERRIDE, auto_workers
from xdist.plugin import pytest_xdist_auto_num_workers as xdist_count


def _config(args_source: pytest.Config.ArgsSource, port: str | None) -> Any:
    """What the hook reads of a config: how its paths were given, --port, and xdist's -n."""
    options = {"port": port, "port_cmd": None}
    return SimpleNamespace(args_source=args_source, option=SimpleNamespace(numprocesses="auto"),
                           getoption=lambda name, default=None: options.get(name, default))


def test_one_worker_more_than_the_cores() -> None:
    assert auto_workers(2, None, own_tests=True) == 3
    assert auto_workers(16, None, own_tests=True) == 17


def test_xdists_override_is_the_count_used() -> None:
    assert auto_workers(2, "2", own_tests=True) == 2


@pytest.fixture
def auto_hook(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    if not request.config.pluginmanager.hasplugin("xdist"):
        pytest.skip("xdist is not loaded in this run (-p no:xdist): there is no -n auto to count")
    monkeypatch.delenv(OVERRIDE, raising=False)
    return request.config.hook.pytest_xdist_auto_num_workers


def test_the_suites_auto_hook_adds_one_to_xdists_count(request: pytest.FixtureRequest, auto_hook: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert auto_hook(config=request.config) == xdist_count(request.config) + 1
    named = _config(pytest.Config.ArgsSource.ARGS, "reference")  # `pytest -n auto tests ... --port=reference`
    assert auto_hook(config=named) == xdist_count(named) + 1
    monkeypatch.setenv(OVERRIDE, "5")
    assert auto_hook(config=request.config) == 5


def test_the_conformance_suite_alone_keeps_one_worker_per_core(auto_hook: Any) -> None:
    # `pytest -n auto --port=reference` names no path: the ini file's testpaths load our
    # conftest, but the plugin runs the scenarios alone.
    alone = _config(pytest.Config.ArgsSource.TESTPATHS, "reference")
    assert auto_hook(config=alone) == xdist_count(alone)
    own = _config(pytest.Config.ArgsSource.TESTPATHS, None)  # `pytest -n auto`: our own tests
    assert auto_hook(config=own) == xdist_count(own) + 1
