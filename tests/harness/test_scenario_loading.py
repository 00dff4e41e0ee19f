"""Scenario files: every committed one is valid, and a broken one is refused with a
message that names the file and the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.scenario.model import ScenarioError, load_scenario, scenario_files

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


def test_invalid_json_is_refused_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text('{\n  "id": "tiny",\n  oops\n}', encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value) == f"{path}:3:3: cannot read scenario: not valid JSON: Expecting property name enclosed in double quotes"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_non_json_number_is_refused_with_line_and_column(tmp_path: Path, constant: str) -> None:
    # Python's json reads these; the run path would send them on to the port as null.
    path = tmp_path / "tiny.json"
    path.write_text('{\n  "title": "NaN \\" Infinity",\n  "x": ' + constant + "\n}", encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value) == (f"{path}:3:8: cannot read scenario: not valid JSON: {constant} is not a JSON value "
                                 "(JSON has no NaN or infinity: write a number, or a string)")


def test_a_scenario_that_is_not_utf8_is_refused_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_bytes(b'{\n  "title": "caf\xe9"\n}')
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value) == f"{path}:2:16: cannot read scenario: not UTF-8 (byte 0xe9)"


def test_a_symlink_loop_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.symlink_to(path.name)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value) == f"{path}: cannot read scenario: a symlink loop"


RELAY = {"name": "lookup", "description": "d", "relay": True}


@pytest.mark.parametrize(
    ("host", "json_path"),
    [
        ({"call:c1": {"ok": True, "data": {"output": "x", "isError": "no"}}}, "$.host.waitFor.answers['call:c1'].data.isError"),
        ({"call:c1": {"ok": "yes"}}, "$.host.waitFor.answers['call:c1'].ok"),
        ({"call:c1": {"ok": True, "data": {"results": [{"id": "c1", "output": "x"}]}}}, "$.host.waitFor.answers['call:c1'].data.results[0].isError"),
        ({"call:c1": {"ok": True, "data": {"token": "t"}}}, "$.host.waitFor.answers['call:c1'].data"),
        ({"call:c1": {"ok": True, "is_error": True}}, "$.host.waitFor.answers['call:c1'].is_error"),
        ({"req-1": {"ok": True, "data": {"output": "x", "isError": "no"}}}, "$.host.waitFor.answers['req-1'].data.isError"),
        ({"req-1": {}}, "$.host.waitFor.answers['req-1'].ok"),
    ],
    ids=["shorthand-isError", "ok-string", "results-missing-isError", "relay-data-free-form", "snake-case", "request-keyed", "no-ok"],
)
def test_host_answers_follow_the_answer_schema(tmp_path: Path, host: dict, json_path: str) -> None:
    data = {**MINIMAL, "toolkit": {"tools": [RELAY]}, "host": {"waitFor": {"answers": host}}}
    with pytest.raises(ScenarioError, match="tiny.json: not a valid scenario") as caught:
        load_scenario(_write(tmp_path, data))
    assert f"  {json_path}" in str(caught.value)


def test_a_native_suspension_answer_may_carry_any_data(tmp_path: Path) -> None:
    data = {**MINIMAL, "host": {"waitFor": {"answers": {"req-1": {"ok": True, "data": {"token": "t"}, "reason": "r"}}}}}
    assert load_scenario(_write(tmp_path, data)).id == "tiny"


def test_a_resume_answer_needs_an_id(tmp_path: Path) -> None:
    data = {**MINIMAL, "resume": {"answer": {"ok": True}, "turns": []}}
    with pytest.raises(ScenarioError) as caught:
        load_scenario(_write(tmp_path, data))
    assert "$.resume.answer.id" in str(caught.value)
