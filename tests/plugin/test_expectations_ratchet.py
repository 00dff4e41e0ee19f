"""The expectations ratchet end to end: known failures pass, anything else fails loudly."""

from __future__ import annotations

from pathlib import Path

import pytest
from inprocess import PluginRunner

from toolnexus_conformance.verdict.expectations import load


# Several inner runs in a row: a budget of its own over the suite-wide 60 s, so a loaded
# machine slows the test without failing it.
@pytest.mark.timeout(300)
def test_a_port_without_relay_fails_relay_rules_as_capability_and_the_ratchet_holds(
    run_plugin: PluginRunner, scenario: Path, tmp_path: Path
) -> None:
    expectations = tmp_path / "norelay.toml"
    first = run_plugin(str(scenario), "--port=reference-norelay")
    assert first.code == 1
    assert "(normative, capability)" in first.output
    assert "does not declare the capabilities ['relay']" in first.output

    written = run_plugin(str(scenario), "--port=reference-norelay", f"--expectations={expectations}", "--update-expectations")
    entries = load(expectations).entries
    assert entries and all(e.reason == "capability" for e in entries), written.output
    # Variants that failed only for the same missing capability are one root cause: one
    # entry over every rule of those variants, not one per rule or per variant.
    assert len(entries) == 1, written.output
    assert "relay-single-durable[openai-run]::*" in entries[0].keys

    green = run_plugin(str(scenario), "--port=reference-norelay", f"--expectations={expectations}")
    assert green.code == 0, green.output

    # Narrow the entry to another rule: those failures are unexpected again.
    text = expectations.read_text(encoding="utf-8")
    dropped = text.replace('rule = "*"', 'rule = "relay.nothing-here"')
    expectations.write_text(dropped, encoding="utf-8")
    red = run_plugin(str(scenario), "--port=reference-norelay", f"--expectations={expectations}")
    assert red.code == 1
    assert "[relay.calls-in-one-request] (normative, capability)" in red.output
    assert "expectation matched nothing (remove it): relay-single-durable[" in red.output


def test_an_unexpected_pass_fails_and_prints_the_update_command(run_plugin: PluginRunner, scenario: Path, tmp_path: Path) -> None:
    expectations = tmp_path / "reference.toml"
    expectations.write_text(
        '[[expected]]\nkey = "relay-single-durable[openai-run]::relay.request-kind"\nreason = "divergence"\n',
        encoding="utf-8",
    )
    run = run_plugin(str(scenario), "--port=reference", f"--expectations={expectations}")
    assert run.code == 1
    assert "passes now but is listed as an expected failure" in run.output
    assert f"--expectations={expectations} --update-expectations" in run.output


def test_an_expected_failure_with_another_reason_class_still_fails(run_plugin: PluginRunner, scenario: Path, tmp_path: Path) -> None:
    expectations = tmp_path / "norelay.toml"
    expectations.write_text(
        '[[expected]]\nkey = "relay-single-durable[openai-run]::relay.call*"\nreason = "divergence"\n', encoding="utf-8"
    )
    run = run_plugin(str(scenario), "--port=reference-norelay", f"--expectations={expectations}", "-k", "openai-run")
    assert run.code == 1
    assert "expected to fail as 'divergence', failed as 'capability'" in run.output
