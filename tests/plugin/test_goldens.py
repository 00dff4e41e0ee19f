"""Goldens: unused ones are reported, and a port that differs from its golden fails with a
minimal diff and a rerun command. Each test edits a private copy of the fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inprocess import PluginRunner
from plugin_runner import private_fixtures

SCENARIO_ID = "relay-single-durable"


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    fixtures = private_fixtures(tmp_path, SCENARIO_ID)
    return fixtures, fixtures / "scenarios" / f"{SCENARIO_ID}.json"


def _edit_golden(fixtures: Path, variant: str, edit: object) -> None:
    path = fixtures / "golden" / SCENARIO_ID / f"{variant}.json"
    golden = json.loads(path.read_text(encoding="utf-8"))
    edit(golden)  # type: ignore[operator]
    path.write_text(json.dumps(golden, indent=2), encoding="utf-8")


def test_an_orphan_golden_fails_the_run_and_is_named(run_plugin: PluginRunner, tmp_path: Path) -> None:
    fixtures, scenario = _setup(tmp_path)
    golden = fixtures / "golden" / SCENARIO_ID
    shutil.copy(golden / "openai-run.json", golden / "openai-orphan.json")
    run = run_plugin(str(scenario), "--port=reference", fixtures=fixtures)
    assert run.code == 1
    assert "unused golden" in run.output and "openai-orphan.json" in run.output


def test_a_filtered_run_does_not_report_goldens_it_did_not_select(run_plugin: PluginRunner, tmp_path: Path) -> None:
    fixtures, scenario = _setup(tmp_path)
    run = run_plugin(str(scenario), "--port=reference", "-k", "openai-run", fixtures=fixtures)
    assert run.code == 0, run.output
    assert "unused golden" not in run.output


def test_a_port_differing_from_the_golden_gets_a_minimal_diff(run_plugin: PluginRunner, tmp_path: Path) -> None:
    fixtures, scenario = _setup(tmp_path)
    _edit_golden(fixtures, "openai-run", lambda g: g["observables"]["phases"][0]["requests"][0].update(model="another-model"))
    run = run_plugin(str(scenario), "--port=reference", "-k", "openai-run", fixtures=fixtures)
    assert run.code == 1
    assert "[golden.observables] (normative, golden)" in run.output
    assert '$.phases[0].requests[0].model: golden "another-model", port "conformance-model"' in run.output
    rerun = f"rerun: TOOLNEXUS_CONFORMANCE_FIXTURES={fixtures} python -m pytest '{scenario}::{SCENARIO_ID}[openai-run]' --port=reference"
    assert rerun in run.output


def test_a_golden_older_than_its_scenario_asks_for_regeneration(run_plugin: PluginRunner, tmp_path: Path) -> None:
    fixtures, scenario = _setup(tmp_path)
    _edit_golden(fixtures, "openai-run", lambda g: g["provenance"].update(scenario="0" * 16))
    run = run_plugin(str(scenario), "--port=reference", "-k", "openai-run", fixtures=fixtures)
    assert run.code == 1
    assert "the golden is stale" in run.output and "--snapshot-update" in run.output


# Several inner runs in a row: a budget of its own over the suite-wide 60 s, so a loaded
# machine slows the test without failing it.
@pytest.mark.timeout(300)
def test_regenerating_writes_the_goldens_of_a_new_scenario(run_plugin: PluginRunner, tmp_path: Path) -> None:
    fixtures, scenario = _setup(tmp_path)
    shutil.rmtree(fixtures / "golden" / SCENARIO_ID)
    missing = run_plugin(str(scenario), "--port=reference", "-k", "openai-run", fixtures=fixtures)
    assert missing.code == 1 and "no golden for" in missing.output
    written = run_plugin(str(scenario), "--port=reference", "--snapshot-update", fixtures=fixtures)
    assert written.code == 0, written.output
    assert sorted(p.name for p in (fixtures / "golden" / SCENARIO_ID).glob("*.json")) == [
        f"{style}-{entry}.json" for style in ("anthropic", "openai") for entry in ("ask", "run", "stream")
    ]
    again = run_plugin(str(scenario), "--port=reference", fixtures=fixtures)
    assert again.code == 0, again.output
