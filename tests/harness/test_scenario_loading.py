"""Scenario files: every committed one is valid, and a broken one is refused with a
message that names the file and the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.paths import scenarios_dir
from harness.scenario import ScenarioError, load_scenario, scenario_files

MINIMAL = {
    "id": "tiny",
    "title": "t",
    "rules": ["loop.final-text"],
    "styles": ["openai"],
    "entries": ["run"],
    "toolkit": {"tools": []},
    "prompt": "hi",
    "turns": [{"text": "hello"}],
}


@pytest.mark.parametrize("path", scenario_files(scenarios_dir()), ids=lambda p: p.stem)
def test_every_committed_scenario_loads(path: Path) -> None:
    scenario = load_scenario(path)
    assert list(scenario.variants())


def _write(tmp_path: Path, data: object, name: str = "tiny") -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_minimal_scenario_expands_to_a_base_and_an_uncalled_relay_variant(tmp_path: Path) -> None:
    names = [v.name for v in load_scenario(_write(tmp_path, MINIMAL)).variants()]
    assert names == ["openai-run", "openai-run-uncalled-relay"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"styles": ["cobol"]}, "$.styles[0]"),
        ({"rules": ["relay.no-such-rule"]}, "does not know: relay.no-such-rule"),
        ({"toolkit": {"tools": [{"name": "x", "description": "d"}]}}, "$.toolkit.tools[0]"),
        ({"turns": [{"toolCalls": [{"id": "c1", "name": "x"}]}]}, "$.turns[0].toolCalls[0]"),
        ({"surprise": True}, "$.surprise"),
    ],
)
def test_a_broken_scenario_is_refused_with_its_path(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(ScenarioError, match="tiny.json") as caught:
        load_scenario(_write(tmp_path, {**MINIMAL, **change}))
    assert message in str(caught.value)


def test_the_file_name_must_be_the_id(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="must equal the scenario id 'tiny'"):
        load_scenario(_write(tmp_path, MINIMAL, name="other"))


def test_invalid_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        load_scenario(path)
