"""docs/parity.md is generated from the per-port reports in docs/parity/; it must be current,
and the reports must speak only of rules the registry knows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.reports.parity import render, render_root_causes
from toolnexus_conformance.reports.parity_summary import render_summary, reproduce_command, summarize
from toolnexus_conformance.scenario.model import Scenario

DOCS = Path(__file__).resolve().parents[1] / "docs"
REGEN = "python -m toolnexus_conformance.reports.parity docs/parity/*.json -o docs/parity.md"


def _reports() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((DOCS / "parity").glob("*.json"))]


def test_parity_matrix_is_current() -> None:
    assert (DOCS / "parity.md").read_text(encoding="utf-8") == render(_reports()), f"docs/parity.md is stale; run: {REGEN}"


def test_reports_cover_the_five_driven_ports_and_known_rules() -> None:
    reports = _reports()
    assert {r["port"] for r in reports} == {"reference", "python", "golang", "java", "js"}
    known = {r["id"] for r in json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))["rules"]}
    for report in reports:
        unknown = {row["rule"] for row in report["rules"]} - known
        assert not unknown, f"{report['port']}: report names unknown rules {sorted(unknown)}; regenerate it"


# --- the one-minute summary that opens docs/parity.md (toolnexus_conformance/reports/parity_summary.py) ---


RULES = [
    {"id": "relay.declined", "level": "normative"},
    {"id": "relay.request-kind", "level": "normative"},
    {"id": "loop.final-text", "level": "normative"},
    {"id": "loop.user-prompt", "level": "normative"},
    {"id": "decl.order", "level": "normative"},
    {"id": "loop.assistant-content-null", "level": "advisory"},
]
CAP_WHY = "the port does not declare the capabilities ['relay', 'resume'] this variant needs"


def _scenario(sid: str, turns: int, *, resume: bool = False, relay: bool = True) -> Scenario:
    data = {
        "id": sid,
        "rules": ["relay.declined", "relay.request-kind"] if relay else ["loop.final-text"],
        "styles": ["openai", "anthropic"],
        "entries": ["run", "ask", "stream"],
        "toolkit": {"tools": [{"name": "t", "relay": relay}]},
        "turns": [{"text": "x"}] * turns,
    }
    if resume:
        data["resume"] = {"answer": {}, "turns": [{"text": "y"}]}
    return Scenario(Path(f"{sid}.json"), data, "0")


SCENARIOS = {
    "big-durable": _scenario("big-durable", 3, resume=True),
    "small-durable": _scenario("small-durable", 1, resume=True),
    "plain": _scenario("plain", 1, relay=False),
}


def _row(rule: str, level: str = "normative", *, passed: int = 0, fail: int = 0, gap: int = 0, by: dict | None = None) -> dict:
    by = by or {}
    return {"rule": rule, "level": level, "pass": passed, "fail": fail, "expected": sum(by.values()), "gap": gap,
            "notApplicable": 0, "expectedByReason": by}


def _report(**overrides: object) -> dict:
    report = {
        "port": "golang",
        "library": "toolnexus 9.9.9",
        "capabilities": ["openai"],
        "rules": [
            _row("relay.declined", by={"divergence": 6}),
            _row("relay.request-kind", passed=4, by={"capability": 2}),
            _row("loop.final-text", passed=12),
            _row("loop.assistant-content-null", "advisory", passed=3, gap=2),
        ],
        "gaps": {},
        "failures": {
            "big-durable[openai-run]::relay.declined": {"reason": "divergence", "observed": "BIG: result was ''"},
            "small-durable[anthropic-ask]::relay.declined": {"reason": "divergence", "observed": "SMALL-ASK: result was ''"},
            "small-durable[openai-run]::relay.declined": {"reason": "divergence", "observed": "SMALL-RUN: result was ''"},
            "plain[openai-ask-uncalled-relay]::*": {"reason": "capability", "observed": CAP_WHY},
        },
        "staleExpectations": [],
    }
    report.update(overrides)
    return report


def test_summary_classifies_every_normative_rule() -> None:
    s = summarize(_report(), RULES, load=SCENARIOS.get, needs_source=True)
    assert s.normative == 5
    assert [f.rule for f in s.failing] == ["relay.declined"]
    assert s.passing == ["relay.request-kind", "loop.final-text"]
    # The capability-blocked variant (folded to `variant::*`) would have checked the plain
    # scenario's rules: loop.final-text passes elsewhere, so it is only partly tested.
    assert s.partly["loop.final-text"] == ("relay", "resume")
    assert s.unexercised == ["loop.user-prompt", "decl.order"]
    assert s.gaps == {"loop.assistant-content-null": 2}


def test_a_rule_blocked_only_by_a_capability_is_not_testable_not_failing() -> None:
    report = _report(rules=[_row("loop.final-text", fail=2)], failures={"plain[openai-run-uncalled-relay]::*": {"reason": "capability", "observed": CAP_WHY}})
    s = summarize(report, RULES, load=SCENARIOS.get)
    assert s.failing == []
    assert s.untestable["loop.final-text"] == ("relay", "resume")
    line = render_summary([s])[0]
    assert "1 not testable" in line and "need `relay` + `resume`" in line, line


def test_failing_rule_names_the_smallest_scenario_its_reason_and_a_rerun_command() -> None:
    s = summarize(_report(), RULES, load=SCENARIOS.get, needs_source=True)
    (failing,) = s.failing
    # Fewest turns wins over the bigger scenario; the run entry over ask.
    assert failing.variant == "small-durable[openai-run]"
    assert failing.why == "SMALL-RUN: result was ''"
    assert failing.known and failing.reason == "divergence" and failing.failing_variants == 3
    assert failing.command == "pytest --port=golang --port-src=PATH/TO/toolnexus -k 'small-durable[openai-run]' --rule=relay.declined"
    text = "\n".join(render_summary([s]))
    assert "`relay.declined` (divergence; known" in text and failing.command in text


def test_an_unexpected_failure_is_marked_new_and_a_stale_expectation_is_shown() -> None:
    report = _report(rules=[_row("relay.declined", fail=1)], staleExpectations=["x[openai-run]::decl.order"])
    text = "\n".join(render_summary([summarize(report, RULES, load=SCENARIOS.get)]))
    assert "**new**" in text
    assert "**1 stale expectation**" in text


def test_reproduce_command_selects_exactly_one_variant() -> None:
    """The -k expression the page prints picks one variant of the real suite, not its
    uncalled-relay sibling or a scenario sharing a prefix."""
    node = "relay-declined-durable[openai-run]"
    command = reproduce_command("pytest --port=reference", node, "relay.declined")
    assert command == f"pytest --port=reference -k '{node}' --rule=relay.declined"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "--port=reference",
            "-k", node, "--rule=relay.declined"]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120)
    assert f"::{node}" in done.stdout and "1/" in done.stdout and "tests collected" in done.stdout, done.stdout[-800:]


def test_root_causes_show_the_whole_cause_and_mark_a_flaky_one() -> None:
    cause = "a sentence long enough to be cut at any table width " * 8 + "(its last words)"
    report = {
        "port": "golang", "library": "x", "rules": {}, "failures": [],
        "rootCauses": [
            {"rule": "golden.observables", "reason": "golden", "variants": 3, "cause": cause, "source": "a.go:1", "flaky": True},
            {"rule": "relay.declined", "reason": "divergence", "variants": 2, "note": "n" * 500},
        ],
    }
    lines = render_root_causes([report])
    flaky = next(line for line in lines if "golden.observables" in line)
    assert "| golden, flaky | 3 |" in flaky
    assert "(its last words)" in flaky
    noted = next(line for line in lines if "relay.declined" in line)
    assert "n" * 239 + "…" in noted and "n" * 241 not in noted
