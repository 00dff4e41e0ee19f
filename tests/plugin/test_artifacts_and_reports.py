"""--artifacts keeps the exchanges of failing variants; --conformance-report writes JSON and
a markdown matrix; the parity command renders reports into docs/parity.md's format."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from inprocess import PluginRunner
from plugin_runner import REPO, private_fixtures, run_pytest

from toolnexus_conformance.reports.parity import render

SCENARIO_ID = "relay-single-durable"


def test_artifacts_are_written_for_failing_variants_only(run_plugin: PluginRunner, tmp_path: Path) -> None:
    fixtures = private_fixtures(tmp_path, SCENARIO_ID)
    golden = fixtures / "golden" / SCENARIO_ID / "openai-run.json"
    data = json.loads(golden.read_text(encoding="utf-8"))
    data["observables"]["phases"][0]["requests"][0]["model"] = "changed"
    golden.write_text(json.dumps(data), encoding="utf-8")
    artifacts = tmp_path / "artifacts"
    run = run_plugin(str(fixtures / "scenarios" / f"{SCENARIO_ID}.json"), "--port=reference", f"--artifacts={artifacts}", fixtures=fixtures)
    assert run.code == 1
    assert [p.name for p in artifacts.iterdir()] == [f"{SCENARIO_ID}__openai-run.json"]
    saved = json.loads((artifacts / f"{SCENARIO_ID}__openai-run.json").read_text(encoding="utf-8"))
    methods = [json.loads(entry["line"]).get("method") for entry in saved["jsonrpc"] if entry["line"].startswith("{")]
    assert "client.run" in methods and "toolkit.describe" in methods
    assert saved["phases"][0]["requests"][0]["model"] == "conformance-model"


def test_the_conformance_report_has_json_and_markdown(run_plugin: PluginRunner, tmp_path: Path) -> None:
    target = tmp_path / "reference.json"
    run = run_plugin(f"fixtures/scenarios/{SCENARIO_ID}.json", "--port=reference", f"--conformance-report={target}")
    assert run.code == 0, run.output
    report = json.loads(target.read_text(encoding="utf-8"))
    assert report["port"] == "reference" and report["library"].startswith("reference_py")
    rows = {row["rule"]: row for row in report["rules"]}
    assert rows["relay.calls-in-one-request"]["pass"] == 6
    assert "| `relay.calls-in-one-request` | normative | 6 | 0 |" in target.with_suffix(".md").read_text(encoding="utf-8")
    matrix = render([report])
    assert "| `relay.calls-in-one-request` | normative | pass 6 |" in matrix
    assert "| csharp | — | no:" in matrix


@pytest.mark.slow
def test_a_serial_and_an_xdist_run_write_the_same_report_naming_the_failing_rule(tmp_path: Path) -> None:
    """Both reports are read from the results stream (an xdist controller's is its workers'
    streams merged): the same verdicts give the same report, failure and evidence included."""
    fixtures = private_fixtures(tmp_path, SCENARIO_ID)
    golden = fixtures / "golden" / SCENARIO_ID / "openai-run.json"
    data = json.loads(golden.read_text(encoding="utf-8"))
    data["observables"]["phases"][0]["requests"][0]["model"] = "changed"
    golden.write_text(json.dumps(data), encoding="utf-8")
    scenario = str(fixtures / "scenarios" / f"{SCENARIO_ID}.json")
    reports = []
    for extra in ([], ["-n", "2"]):
        target = tmp_path / f"report{len(reports)}.json"
        run = run_pytest(scenario, "--port=reference", f"--conformance-report={target}", *extra, fixtures=fixtures)
        assert run.code == 1, run.output
        reports.append(json.loads(target.read_text(encoding="utf-8")))
    serial, distributed = reports
    assert list(serial["failures"]) == [f"{SCENARIO_ID}[openai-run]::golden.observables"]
    assert serial["failures"][f"{SCENARIO_ID}[openai-run]::golden.observables"]["reason"] == "golden"
    assert distributed == serial


@pytest.mark.slow
def test_the_report_of_a_mutant_run_names_the_rule_it_breaks_serial_and_xdist_alike(tmp_path: Path) -> None:
    """A reference shim that sends the wrong anthropic-version header: the results stream
    has it fail loop.anthropic-endpoint on the anthropic variants, and only there."""
    mutant = f"{sys.executable} {REPO / 'tests' / 'mutants' / 'mutant_shim.py'} anthropic-wrong-version"
    scenario = "fixtures/scenarios/loop-anthropic-root-base.json"
    reports = []
    for extra in ([], ["-n", "2"]):
        target = tmp_path / f"mutant{len(reports)}.json"
        run = run_pytest(scenario, f"--port-cmd={mutant}", f"--conformance-report={target}", *extra)
        assert run.code == 1, run.output
        assert "[loop.anthropic-endpoint]" in run.output
        reports.append(json.loads(target.read_text(encoding="utf-8")))
    serial, distributed = reports
    assert {key.split("::", 1)[1] for key in serial["failures"]} == {"loop.anthropic-endpoint"}
    assert all("[anthropic-" in key for key in serial["failures"])
    assert distributed == serial
