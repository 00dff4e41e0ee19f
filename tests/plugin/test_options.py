"""Command-line misuse gets one clear line and a usage-error exit, never a traceback.

Each case runs the plugin in-process (``run_plugin``), from the repository root."""

from __future__ import annotations

from pathlib import Path

import pytest
from inprocess import PluginRunner


def test_unknown_port_lists_the_known_ones(run_plugin: PluginRunner, scenario: Path) -> None:
    run = run_plugin(str(scenario), "--port=cobol")
    assert run.code == 4
    assert "unknown port 'cobol'" in run.output and "reference" in run.output
    assert "Traceback" not in run.output


def test_snapshot_update_is_refused_for_anything_but_the_reference(run_plugin: PluginRunner, scenario: Path) -> None:
    run = run_plugin(str(scenario), "--port-cmd=python -c pass", "--snapshot-update")
    assert run.code == 4
    assert "only allowed with --port=reference" in run.output


def test_update_expectations_needs_a_file(run_plugin: PluginRunner, scenario: Path) -> None:
    run = run_plugin(str(scenario), "--port=reference", "--update-expectations")
    assert run.code == 4
    assert "--update-expectations needs --expectations" in run.output


def test_a_missing_expectations_file_is_refused(run_plugin: PluginRunner, scenario: Path, tmp_path: Path) -> None:
    run = run_plugin(str(scenario), "--port=reference", f"--expectations={tmp_path / 'nope.toml'}")
    assert run.code == 4
    assert "no such expectations file" in run.output


def test_a_port_that_needs_a_checkout_says_how_to_run_it(run_plugin: PluginRunner, scenario: Path) -> None:
    run = run_plugin(str(scenario), "--port=golang")
    assert run.code == 4
    assert "--port-src" in run.output


def test_an_invalid_scenario_file_is_a_collection_error_naming_it(run_plugin: PluginRunner, tmp_path: Path) -> None:
    bad = tmp_path / "broken-scenario.json"
    bad.write_text('{"id": "broken-scenario", "title": "x", "rules": [], "styles": ["cobol"]}', encoding="utf-8")
    run = run_plugin(str(bad), "--port=reference")
    assert run.code != 0
    assert "broken-scenario.json: not a valid scenario" in run.output
    assert "$.styles[0]" in run.output or "$.styles" in run.output
    assert "Traceback" not in run.output


def test_a_scenario_that_is_not_json_is_a_collection_error(run_plugin: PluginRunner, tmp_path: Path) -> None:
    bad = tmp_path / "not-json.json"
    bad.write_text("{oops", encoding="utf-8")
    run = run_plugin(str(bad), "--port=reference")
    assert run.code != 0
    assert f"{bad}:1:2: cannot read scenario: not valid JSON: Expecting property name enclosed in double quotes" in run.output
    assert "Traceback" not in run.output


def test_an_expectations_file_of_another_port_is_refused(run_plugin: PluginRunner, scenario: Path, tmp_path: Path) -> None:
    other = tmp_path / "golang.toml"
    other.write_text('port = "golang"\n', encoding="utf-8")
    run = run_plugin(str(scenario), "--port=reference", f"--expectations={other}")
    assert run.code == 4
    assert f"{other}: this expectations file is for port 'golang', not 'reference'" in run.output
    assert "Traceback" not in run.output


def test_port_src_on_a_port_that_takes_none_is_refused(run_plugin: PluginRunner, scenario: Path, tmp_path: Path) -> None:
    run = run_plugin(str(scenario), "--port=reference", f"--port-src={tmp_path}")
    assert run.code == 4
    assert "port 'reference' does not build from a toolnexus checkout, so --port-src would be ignored" in run.output
    assert "golang" in run.output and "java" in run.output  # the ports that do take one


def test_port_src_with_port_cmd_is_refused(run_plugin: PluginRunner, scenario: Path, tmp_path: Path) -> None:
    run = run_plugin(str(scenario), "--port-cmd=python shim.py", f"--port-src={tmp_path}")
    assert run.code == 4
    assert "--port-src is not used with --port-cmd" in run.output


def test_a_rule_pattern_that_matches_no_rule_names_the_pattern(run_plugin: PluginRunner, scenario: Path) -> None:
    run = run_plugin(str(scenario), "--port=reference", "--rule=relay.*", "--rule=nosuch.*")
    assert run.code == 4
    assert "--rule='nosuch.*' matches no rule id in fixtures/rules.json" in run.output
    assert "rules not exercised" not in run.output


@pytest.mark.parametrize("target", ["r.md", "r.MD"])
def test_a_markdown_path_for_the_json_report_is_refused(run_plugin: PluginRunner, scenario: Path, tmp_path: Path, target: str) -> None:
    run = run_plugin(str(scenario), "--port=reference", f"--conformance-report={tmp_path / target}")
    assert run.code == 4
    assert "the report is JSON and its markdown matrix goes to the .md sibling" in run.output
    assert f"--conformance-report={tmp_path / 'r.json'}" in run.output
    assert not list(tmp_path.iterdir())
