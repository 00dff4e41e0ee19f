"""Every rule in the registry is bound to exactly one check, so a scenario citing it proves
something; a check reports only its own rule id (a style-specific rule is not applicable on
the other style); and checks read the scenario through Facts, never raw."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.run.facts import Facts, facts_for
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord
from toolnexus_conformance.scenario.declarations import declaration
from toolnexus_conformance.scenario.model import Variant, load_scenario
from toolnexus_conformance.verdict.evaluate import evaluate
from toolnexus_conformance.verdict.rules import CHECKS, NotApplicable, check, load_all

RULES_DIR = Path(__file__).resolve().parents[2] / "toolnexus_conformance" / "verdict" / "rules"


def _registry() -> dict[str, dict[str, Any]]:
    raw = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))
    return {rule["id"]: rule for rule in raw["rules"]}


def test_every_rule_has_a_check() -> None:
    missing = sorted(set(_registry()) - set(load_all()))
    assert not missing, "rules with no check bound (add one under toolnexus_conformance/verdict/rules/): " + ", ".join(missing)


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


# -- precision: a difference another rule owns does not fire this one --------------------


def test_request_tools_in_another_order_fail_the_order_not_the_shape() -> None:
    record, facts = _record(_variant("decl-order", "openai"))
    record.declarations = _describe(facts)
    record.phases[0].requests.append({"tools": list(reversed(record.declarations["openai"]))})
    outcomes = {o.rule: o for o in evaluate(record, facts, DECL_RULES, load_all())}
    assert [r for r, o in outcomes.items() if o.status == "fail"] == ["decl.order"]
    assert "phase 1 request 1 tools list" in outcomes["decl.order"].evidence[0]


def test_a_request_declaration_unlike_describe_fails_the_style_shape() -> None:
    record, facts = _record(_variant("decl-order", "anthropic"))
    record.declarations = _describe(facts)
    changed = [dict(d) for d in record.declarations["anthropic"]]
    changed[0]["description"] = "rewritten"
    record.phases[0].requests.append({"tools": changed})
    outcomes = {o.rule: o for o in evaluate(record, facts, DECL_RULES, load_all())}
    assert [r for r, o in outcomes.items() if o.status == "fail"] == ["decl.anthropic-shape"]
    assert "the anthropic declaration of 'zeta_report'" in outcomes["decl.anthropic-shape"].evidence[0]


def test_run_result_keys_leave_the_transcript_and_the_request_to_their_rules() -> None:
    record, facts = _record(_variant("relay-auth-first-durable", "openai"), result={
        "status": "pending", "text": "p", "messages": [{"role": "user", "content": "p", "extra": 1}],
        "pending": {"id": "r", "kind": "k", "prompt": "p", "url": None}, "snake_case": True})
    outcomes = {o.rule: o for o in evaluate(record, facts, ["keys.run-result", "keys.transcript"], load_all())}
    assert outcomes["keys.transcript"].status == "fail"
    assert outcomes["keys.run-result"].status == "fail"
    assert not any(e.startswith(("phase 1 RunResult.messages", "phase 1 RunResult.pending")) for e in outcomes["keys.run-result"].evidence)
    assert any("snake_case" in e for e in outcomes["keys.run-result"].evidence)


def test_a_relay_call_entry_key_is_judged_by_call_entry_keys_not_request_keys() -> None:
    variant = _variant("relay-auth-first-durable", "openai")
    entry = {"id": "call_w1", "name": "lookup_weather", "input": {"city": "Oslo", "unit": "C"},
             "arguments": "{ \"unit\": \"C\",  \"city\": \"Oslo\" }", "type": "function"}
    request = {"id": "pnd-1", "kind": "tool_call", "prompt": "relay tool call lookup_weather to the caller for execution",
               "data": {"calls": [entry]}}
    record, facts = _record(variant, result={"status": "pending", "text": request["prompt"], "pending": request})
    fired = _fired(record, facts, ["susp.request-keys", "relay.call-entry-keys"])
    assert fired == {"susp.request-keys": "pass", "relay.call-entry-keys": "fail"}


def test_usage_is_judged_against_the_done_event_wherever_it_is() -> None:
    record, facts = _record(_variant("loop-plain-answer", "openai", "stream"), requests=[{}], result={"status": "done"},
                            events=[{"type": "text", "delta": "Hello, conformance suite!"}, {"type": "usage"},
                                    {"type": "done"}, {"type": "text", "delta": ""}])
    fired = _fired(record, facts, ["stream.usage-before-done", "stream.done-last"])
    assert fired == {"stream.usage-before-done": "pass", "stream.done-last": "fail"}
    record.phases[0].events = [{"type": "usage"}, {"type": "text", "delta": "x"}, {"type": "done"}]
    assert _fired(record, facts, ["stream.usage-before-done"]) == {"stream.usage-before-done": "fail"}


def test_event_fields_leave_key_names_to_keys_stream_events() -> None:
    variant = _variant("loop-tool-loop", "anthropic", "stream")
    facts = facts_for(variant)
    call = next(iter(facts.calls.values()))
    messages = _tool_turn("anthropic", [call.id], [call.id])
    snake = {"type": "tool_result", "id": call.id, "name": call.name, "output": "ok", "is_error": False}
    record, facts = _record(variant, result={"status": "pending", "messages": messages}, events=[snake])
    outcomes = {o.rule: o for o in evaluate(record, facts, ["stream.event-fields", "keys.stream-events"], load_all())}
    assert outcomes["keys.stream-events"].status == "fail"
    assert not any("isError" in e for e in outcomes["stream.event-fields"].evidence)
    wrong = dict(snake, isError=True)
    del wrong["is_error"]
    record.phases[0].events = [wrong]
    found = evaluate(record, facts, ["stream.event-fields"], load_all())[0]
    assert any("isError True, the recorded result" in e for e in found.evidence)


def test_a_rewritten_calls_input_is_judged_by_args_rewrite_only() -> None:
    variant = _variant("relay-args-rewrite-durable", "openai")
    facts = facts_for(variant)
    relay_call = next(c for c in facts.calls.values() if c.kind == "relay" and c.name in facts.rewritten_args)
    entry = {"id": relay_call.id, "name": relay_call.name, "input": relay_call.arguments, "arguments": relay_call.raw_arguments}
    request = {"id": "pnd-1", "kind": "tool_call", "prompt": "p", "data": {"calls": [entry]}}
    record, facts = _record(variant, result={"status": "pending", "text": "p", "pending": request})
    fired = _fired(record, facts, ["relay.arguments-parse-to-input", "relay.args-rewrite"])
    assert fired == {"relay.arguments-parse-to-input": "pass", "relay.args-rewrite": "fail"}


def _waitfor_raising_in_turn_two(tmp_path: Path) -> Variant:
    """susp-waitfor-raises with a real tool's turn first: the raising waitFor comes in turn 2."""
    data = json.loads((fixtures_dir() / "scenarios" / "susp-waitfor-raises.json").read_text(encoding="utf-8"))
    data["toolkit"]["tools"].append({"name": "ring_bell", "description": "Ring", "schema": {"type": "object"},
                                     "behaviour": {"reply": "rung"}})
    data["turns"].insert(0, {"toolCalls": [{"id": "call_r1", "name": "ring_bell", "arguments": "{}"}],
                             "usage": {"input": 5, "output": 2}})
    path = tmp_path / "waitfor-raises-in-turn-two.json"
    path.write_text(json.dumps({**data, "id": path.stem}), encoding="utf-8")
    return Variant(load_scenario(path), "openai", "run", uncalled_relay=False)


@pytest.mark.parametrize(("requests", "status"), [(2, "pass"), (3, "fail")])
def test_a_waitfor_failing_in_a_later_turn_allows_the_requests_up_to_that_turn(
    tmp_path: Path, requests: int, status: str
) -> None:
    # The reference sends two requests here (the differential found the check counting every
    # request after the first as following the failure).
    record, facts = _record(_waitfor_raising_in_turn_two(tmp_path), error={"kind": "run", "message": "host failed"},
                            requests=[{"messages": []}] * requests)
    outcome = evaluate(record, facts, ["susp.waitfor-error-aborts"], load_all())[0]
    assert outcome.status == status
    if status == "fail":
        assert outcome.evidence == (
            "1 provider request(s) followed a failed waitFor (it failed during the tools of turn 2, served by request 2)",
        )


def test_a_request_after_a_waitfor_failing_in_the_first_turn_fails_error_aborts() -> None:
    record, facts = _record(_variant("susp-waitfor-raises", "anthropic"), error={"kind": "run", "message": "host failed"},
                            requests=[{"messages": []}, {"messages": []}])
    outcome = evaluate(record, facts, ["susp.waitfor-error-aborts"], load_all())[0]
    assert (outcome.status, outcome.evidence) == (
        "fail", ("1 provider request(s) followed a failed waitFor (it failed during the tools of turn 1, served by request 1)",)
    )


def _halting_in_turn_one_with_calls_after(tmp_path: Path) -> Variant:
    """relay-auth-first-durable with a later turn of calls that the halt leaves unserved (the
    differential generates such turns; the fixtures end on their halting turn)."""
    data = json.loads((fixtures_dir() / "scenarios" / "relay-auth-first-durable.json").read_text(encoding="utf-8"))
    data["toolkit"]["tools"].append({"name": "confirm", "description": "Confirm", "schema": {"type": "object"},
                                     "behaviour": {"alwaysSuspend": {"id": "req-confirm", "kind": "approval", "prompt": "Sure?"}}})
    data["turns"].append({"toolCalls": [{"id": "call_c1", "name": "confirm", "arguments": "{}"}], "usage": {"input": 3, "output": 1}})
    path = tmp_path / "halting-in-turn-one.json"
    path.write_text(json.dumps({**data, "id": path.stem}), encoding="utf-8")
    return Variant(load_scenario(path), "openai", "run", uncalled_relay=False)


def test_a_durable_run_halts_on_the_first_turn_with_a_suspending_call(tmp_path: Path) -> None:
    variant = _halting_in_turn_one_with_calls_after(tmp_path)
    pending = {"id": "auth-calendar-1", "kind": "authorization", "prompt": "Sign in to the calendar to continue",
               "url": "https://auth.example.invalid/calendar"}
    record, facts = _record(variant, result={"status": "pending", "pending": pending, "text": pending["prompt"]},
                            requests=[{"messages": []}])
    rules = ["relay.non-relay-first-uncontaminated", "susp.durable-halt"]
    assert _fired(record, facts, rules) == dict.fromkeys(rules, "pass")
    assert [c.id for c in facts.halting_turn or ()] == ["call_a1", "call_w1"]
    record.phases[0].requests.append({"messages": []})
    outcomes = {o.rule: o for o in evaluate(record, facts, rules, load_all())}
    assert outcomes["susp.durable-halt"].evidence == ("1 provider request(s) followed the turn that halted",)
