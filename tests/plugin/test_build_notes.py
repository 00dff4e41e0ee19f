"""What a port's build says the user should know (``builders.common.note``: e.g. the java
shim built without its AOT cache, so every shim starts cold) is shown in the run's summary,
not left in the build's hidden output."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from inprocess import PluginRunner

import toolnexus_conformance.plugin.hooks
from toolnexus_conformance.shim.ports import resolve


def test_the_summary_shows_the_build_notes(run_plugin: PluginRunner, scenario: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def noted(*args: Any, **kwargs: Any) -> Any:
        return dataclasses.replace(resolve(*args, **kwargs), build_notes=("the shim starts cold: no AOT cache",))

    monkeypatch.setattr(toolnexus_conformance.plugin.hooks, "resolve", noted)
    run = run_plugin(str(scenario), "--port=reference")
    assert run.code == 0, run.output
    assert "port build: the shim starts cold: no AOT cache" in run.output, run.output


def test_a_build_without_notes_adds_no_line(run_plugin: PluginRunner, scenario: Any) -> None:
    run = run_plugin(str(scenario), "--port=reference")
    assert run.code == 0, run.output
    assert "port build:" not in run.output
