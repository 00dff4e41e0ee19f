"""benchmarks/flake_rate.py: which scenarios it calls wait-sensitive, how it reads a run's
verdicts, and that a variant whose verdict changes between runs is counted as flaky (the
script itself prints figures; nothing here runs it or times anything)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load_script() -> Any:
    spec = importlib.util.spec_from_file_location("flake_rate", ROOT / "benchmarks" / "flake_rate.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["flake_rate"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


flake_rate = load_script()


def test_wait_sensitive_scenarios_are_those_with_a_delay_or_a_hold(tmp_path: Path) -> None:
    tool = {"name": "t", "description": "d", "schema": {"type": "object"}}
    files = {
        "delayed": {"toolkit": {"tools": [{**tool, "behaviour": {"reply": "x", "delayMs": 5}}]}},
        "held": {"toolkit": {"tools": []}, "host": {"waitFor": {"holdUntil": 2}}},
        "plain": {"toolkit": {"tools": [{**tool, "behaviour": {"reply": "x"}}]}, "host": {"waitFor": {}}},
    }
    for name, data in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    assert [p.stem for p in flake_rate.wait_sensitive(tmp_path)] == ["delayed", "held"]


def test_the_repository_wait_sensitive_set_holds_the_order_scenarios() -> None:
    stems = {p.stem for p in flake_rate.wait_sensitive()}
    assert {"susp-waitfor-concurrent", "halt-concurrent-suspensions", "loop-tool-loop"} <= stems


def test_verdicts_join_the_pytest_outcome_and_the_reported_failures(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="s" name="s[openai-run]"/>'
        '<testcase classname="s" name="s[openai-ask]"><failure message="x"/></testcase>'
        '</testsuite></testsuites>', encoding="utf-8")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"failures": {"s[openai-ask]::susp.first-in-order": {"reason": "divergence"}}}))
    assert flake_rate.verdicts(junit, report) == {
        "s[openai-run]": ("passed", ()),
        "s[openai-ask]": ("failure", ("susp.first-in-order:divergence",)),
    }


def test_a_variant_whose_verdict_changes_between_runs_is_flaky() -> None:
    steady = {"a[x]": ("passed", ()), "b[x]": ("failure", ("r:divergence",))}
    changed = {"a[x]": ("passed", ()), "b[x]": ("passed", ())}
    runs = [flake_rate.Run(1.0, 0, steady), flake_rate.Run(1.0, 1, changed), flake_rate.Run(1.0, 0, steady)]
    unstable = flake_rate.flaky(runs)
    assert set(unstable) == {"b[x]"}
    assert unstable["b[x]"].most_common(1)[0] == (("failure", ("r:divergence",)), 2)


def test_a_variant_missing_from_a_run_is_flaky() -> None:
    runs = [flake_rate.Run(1.0, 0, {"a[x]": ("passed", ())}), flake_rate.Run(1.0, 1, {})]
    assert set(flake_rate.flaky(runs)) == {"a[x]"}


def test_steady_runs_have_no_flake() -> None:
    same = {"a[x]": ("passed", ())}
    assert flake_rate.flaky([flake_rate.Run(1.0, 0, same), flake_rate.Run(2.0, 0, dict(same))]) == {}


def test_hold_margin_measures_every_scenario_that_holds_waitfor() -> None:
    spec = importlib.util.spec_from_file_location("hold_margin", ROOT / "benchmarks" / "hold_margin.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    assert {p.stem for p in module.held_scenarios()} >= {"susp-waitfor-concurrent", "relay-parallel-inprocess"}
