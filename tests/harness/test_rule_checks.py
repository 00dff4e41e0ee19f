"""Every rule in the registry is bound to exactly one check, so a scenario citing it proves
something; a check reports only its own rule id (a style-specific rule is not applicable on
the other style); and checks read the scenario through Facts, never raw."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.declarations import declaration
from harness.evaluate import evaluate
from harness.facts import Facts, facts_for
from harness.paths import fixtures_dir
from harness.rules import CHECKS, NotApplicable, check, load_all
from harness.runner import PhaseRecord, RunRecord
from harness.scenario import Variant, load_scenario

RULES_DIR = Path(__file__).resolve().parents[2] / "harness" / "rules"


def _registry() -> dict[str, dict[str, Any]]:
    raw = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))
    return {rule["id"]: rule for rule in raw["rules"]}


def test_every_rule_has_a_check() -> None:
    missing = sorted(set(_registry()) - set(load_all()))
    assert not missing, "rules with no check bound (add one under harness/rules/): " + ", ".join(missing)


def test_every_check_names_a_registered_rule() -> None:
    unknown = sorted(set(load_all()) - set(_registry()))
    assert not unknown, "checks bound to rule ids the registry does not know: " + ", ".join(unknown)


def test_no_check_function_serves_two_rules() -> None:
    functions = [c.fn for c in load_all().values()]
    shared = sorted({f.__name__ for f in functions if functions.count(f) > 1})
    assert not shared, f"check functions bound to several rule ids: {shared}"


def test_binding_a_function_to_a_second_rule_is_refused() -> None:
    load_all()
    existing = CHECKS["loop.final-text"].fn
    with pytest.raises(RuntimeError, match="already bound to another rule"):
        check("golden.test-only-second-id")(existing)
    assert "golden.test-only-second-id" not in CHECKS


def test_checks_read_the_scenario_only_through_facts() -> None:
    raw = re.compile(r"\.scenario\.data|record\.variant|variant\.toolkit\(")
    offenders = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted(RULES_DIR.glob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if raw.search(line)
    ]
    assert not offenders, "checks reading the raw scenario instead of Facts:\n  " + "\n  ".join(offenders)


# -- checks on synthetic records: each fails on a broken behaviour, under its own id only --


def _variant(scenario: str, style: str, entry: str = "run") -> Variant:
    loaded = load_scenario(fixtures_dir() / "scenarios" / f"{scenario}.json")
    return Variant(loaded, style, entry, uncalled_relay=False)


def _record(variant: Variant, **phase: Any) -> tuple[RunRecord, Facts]:
    facts = facts_for(variant)
    record = RunRecord(variant, facts)
    record.phases.append(PhaseRecord(entry=variant.entry, params={"model": "conformance-model"}, **phase))
    return record, facts


def _describe(facts: Facts) -> dict[str, Any]:
    tools = list(facts.tools.values())
    gemini = [{"name": t["name"], "description": t["description"], "parameters": t["schema"]} for t in tools]
    return {
        "openai": [declaration(t, "openai") for t in tools],
        "anthropic": [declaration(t, "anthropic") for t in tools],
        "gemini": [{"functionDeclarations": gemini}],
    }


def _fired(record: RunRecord, facts: Facts, rules: list[str]) -> dict[str, str]:
    return {o.rule: o.status for o in evaluate(record, facts, rules, load_all())}


DECL_RULES = ["decl.openai-shape", "decl.anthropic-shape", "decl.gemini-shape", "decl.order"]


def test_declarations_as_the_reference_writes_them_pass() -> None:
    record, facts = _record(_variant("decl-order", "openai"))
    record.declarations = _describe(facts)
    assert _fired(record, facts, DECL_RULES) == dict.fromkeys(DECL_RULES, "pass")


def test_flat_gemini_declarations_fail_only_the_gemini_shape() -> None:
    record, facts = _record(_variant("decl-order", "openai"))
    record.declarations = _describe(facts)
    record.declarations["gemini"] = record.declarations["gemini"][0]["functionDeclarations"]
    outcomes = {o.rule: o for o in evaluate(record, facts, DECL_RULES, load_all())}
    assert {r: o.status for r, o in outcomes.items()} == {
        "decl.openai-shape": "pass", "decl.anthropic-shape": "pass", "decl.gemini-shape": "fail", "decl.order": "pass"}
    assert "not one {functionDeclarations: [...]}" in outcomes["decl.gemini-shape"].evidence[0]


def test_reversed_openai_declarations_fail_only_the_order() -> None:
    record, facts = _record(_variant("decl-order", "anthropic"))
    record.declarations = _describe(facts)
    record.declarations["openai"].reverse()
    outcomes = {o.rule: o for o in evaluate(record, facts, DECL_RULES, load_all())}
    assert [r for r, o in outcomes.items() if o.status == "fail"] == ["decl.order"]
    assert "openai list ['Mixed_Case-tool', 'alpha_check', 'zeta_report']" in outcomes["decl.order"].evidence[0]
    assert "expected the toolkit's order ['zeta_report', 'alpha_check', 'Mixed_Case-tool']" in outcomes["decl.order"].evidence[0]


def _tool_turn(style: str, ids: list[str], result_ids: list[str]) -> list[dict[str, Any]]:
    if style == "openai":
        calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids]
        results = [{"role": "tool", "tool_call_id": i, "content": "ok"} for i in result_ids]
        return [{"role": "user", "content": "p"}, {"role": "assistant", "content": None, "tool_calls": calls}, *results]
    blocks = [{"type": "tool_use", "id": i, "name": "t", "input": {}} for i in ids]
    results = [{"type": "tool_result", "tool_use_id": i, "content": "ok", "is_error": False} for i in result_ids]
    return [{"role": "user", "content": "p"}, {"role": "assistant", "content": blocks}, {"role": "user", "content": results}]


RESULT_RULES = ["loop.tool-results-openai", "loop.tool-results-anthropic", "loop.results-in-call-order"]


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_tool_results_rules_judge_only_their_own_style(style: str) -> None:
    record, facts = _record(_variant("decl-order", style), result={"status": "done", "messages": _tool_turn(
        style, ["call_o3", "call_o1", "call_o2"], ["call_o3", "call_o1", "call_o2"])})
    other = "anthropic" if style == "openai" else "openai"
    assert _fired(record, facts, RESULT_RULES) == {
        f"loop.tool-results-{style}": "pass", f"loop.tool-results-{other}": "n/a", "loop.results-in-call-order": "pass"}


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_reversed_results_fail_the_order_and_the_own_style_rule_only(style: str) -> None:
    record, facts = _record(_variant("decl-order", style), result={"status": "done", "messages": _tool_turn(
        style, ["call_o3", "call_o1", "call_o2"], ["call_o2", "call_o1", "call_o3"])})
    other = "anthropic" if style == "openai" else "openai"
    outcomes = {o.rule: o for o in evaluate(record, facts, RESULT_RULES, load_all())}
    assert {r: o.status for r, o in outcomes.items()} == {
        f"loop.tool-results-{style}": "fail", f"loop.tool-results-{other}": "n/a", "loop.results-in-call-order": "fail"}
    assert "results ['call_o2', 'call_o1', 'call_o3'] are not in tool-call order" in outcomes["loop.results-in-call-order"].evidence[0]


def test_sse_rules_judge_only_their_own_style() -> None:
    variant = _variant("loop-tool-loop", "anthropic", "stream")
    facts = facts_for(variant)
    call = next(iter(facts.calls.values()))
    truncated = [{"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": call.name, "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "x", "is_error": False}]}]
    record, facts = _record(variant, requests=[{"messages": []}, {"messages": truncated}])
    outcomes = {o.rule: o for o in evaluate(record, facts, ["loop.sse-openai", "loop.sse-anthropic"], load_all())}
    assert outcomes["loop.sse-openai"].status == "n/a"
    assert outcomes["loop.sse-anthropic"].status == "fail"
    assert f"assembled input of {call.id} is {{}}" in outcomes["loop.sse-anthropic"].evidence[0]


def test_a_durable_halt_with_a_request_after_the_halting_turn_fails_durable_halt_only() -> None:
    variant = _variant("relay-auth-first-durable", "openai")
    pending = {"id": "auth-calendar-1", "kind": "authorization", "prompt": "Sign in to the calendar to continue"}
    result = {"status": "pending", "pending": pending, "text": pending["prompt"]}
    record, facts = _record(variant, result=result, requests=[{"messages": []}, {"messages": []}])
    outcomes = {o.rule: o for o in evaluate(record, facts, ["susp.durable-halt", "halt.run-result"], load_all())}
    assert outcomes["halt.run-result"].status == "pass"
    assert outcomes["susp.durable-halt"].status == "fail"
    assert "1 provider request(s) followed the turn that halted" in outcomes["susp.durable-halt"].evidence


def test_a_halted_result_with_a_limit_fails_run_result_only() -> None:
    variant = _variant("relay-auth-first-durable", "openai")
    pending = {"id": "auth-calendar-1", "kind": "authorization", "prompt": "Sign in to the calendar to continue"}
    result = {"status": "pending", "pending": pending, "text": pending["prompt"], "limit": "maxTurns"}
    record, facts = _record(variant, result=result, requests=[{"messages": []}])
    fired = _fired(record, facts, ["susp.durable-halt", "halt.run-result"])
    assert fired == {"susp.durable-halt": "pass", "halt.run-result": "fail"}


def test_not_applicable_is_raised_not_returned() -> None:
    record, facts = _record(_variant("decl-order", "openai"))
    with pytest.raises(NotApplicable):
        list(CHECKS["loop.sse-anthropic"].fn(record, facts))
