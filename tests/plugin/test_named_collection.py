"""Scenario files named on the command line: pytest collects the scenarios folder once for
each of them, and the folder's collector then builds only the named files' collectors, not
the whole folder's each time; naming the folder (or running the default suite) still
collects every file."""

from __future__ import annotations

from typing import Any

import pytest
from inprocess import INNER
from plugin_runner import REPO

from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.plugin.items import ScenarioFile

NAMED = ["fixtures/scenarios/loop-plain-answer.json", "fixtures/scenarios/relay-single-durable.json::relay-single-durable[openai-run]"]


def _built(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[list[str], str]:
    """The names of the ScenarioFile collectors built (whether pytest went on to collect
    them or not), and the output."""
    monkeypatch.chdir(REPO)
    built: list[str] = []
    original = ScenarioFile.from_parent.__func__  # type: ignore[attr-defined]

    def from_parent(cls: type[ScenarioFile], parent: pytest.Collector, **kwargs: Any) -> ScenarioFile:
        node = original(cls, parent, **kwargs)
        built.append(node.path.name)
        return node

    monkeypatch.setattr(ScenarioFile, "from_parent", classmethod(from_parent))
    result = pytester.runpytest_inprocess(*INNER, "--co", "-q", "--port=reference", *args)
    return built, result.stdout.str()


def test_only_the_named_files_are_collected(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    built, output = _built(pytester, monkeypatch, *NAMED)
    assert sorted(built) == ["loop-plain-answer.json", "relay-single-durable.json"], built
    assert "13 tests collected" in output, output  # 12 variants and the one named


def test_the_folder_named_collects_every_file(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    every = sorted(p.name for p in scenarios_dir().glob("*.json"))
    for args in ([], ["fixtures/scenarios"], ["fixtures"]):
        built, _ = _built(pytester, monkeypatch, *args)
        assert sorted(built) == every, args
