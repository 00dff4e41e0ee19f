"""relay.shorthand-one-call-only and relay.shorthand-several-calls fed recorded runs by
hand: each check judges only its own case (one-call vs several-call Request), passes the
reference's filling and names a broken one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.run.facts import facts_for
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord
from toolnexus_conformance.scenario.model import Scenario, Variant
from toolnexus_conformance.verdict.rules import NotApplicable, load_all

CHECKS = load_all()
RELAY = {"name": "lookup", "description": "l", "relay": True}
CALLS = [{"id": "c1", "name": "lookup", "arguments": "{}"}, {"id": "c2", "name": "lookup", "arguments": "{}"}]


def _record(style: str, results: dict[str, tuple[str, bool]], calls: list[dict[str, Any]]) -> RunRecord:
    data = {"id": "x", "title": "x", "rules": ["relay.shorthand-several-calls"], "styles": [style], "entries": ["run"],
            "toolkit": {"tools": [RELAY]}, "prompt": "p", "turns": [{"toolCalls": calls}],
            "resume": {"answer": {"ok": True, "data": {"output": "sunny"}}, "turns": [{"text": "done"}]}}
    variant = Variant(Scenario(Path("x.json"), data, "0"), style, "run", uncalled_relay=False)
    pending = {"id": "r1", "kind": "relay", "prompt": "p", "data": {"calls": [{"id": c["id"]} for c in calls]}}
    first = PhaseRecord(entry="run", params={}, requests=[{"messages": []}])
    first.result = {"status": "pending", "pending": pending}
    resumed = PhaseRecord(entry="runWithAnswer", params={"pending": pending, "answer": {"ok": True, "data": {"output": "sunny"}}})
    resumed.requests = [{"messages": _transcript(style, calls, results)}]
    resumed.result = {"status": "done", "text": "done"}
    return RunRecord(variant, facts_for(variant), [first, resumed])


def _transcript(style: str, calls: list[dict[str, Any]], results: dict[str, tuple[str, bool]]) -> list[dict[str, Any]]:
    if style == "openai":
        assistant = {"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": "{}"}} for c in calls]}
        return [{"role": "user", "content": "p"}, assistant,
                *({"role": "tool", "tool_call_id": i, "content": text} for i, (text, _) in results.items())]
    assistant = {"role": "assistant", "content": [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": {}} for c in calls]}
    blocks = [{"type": "tool_result", "tool_use_id": i, "content": text, "is_error": err} for i, (text, err) in results.items()]
    return [{"role": "user", "content": "p"}, assistant, {"role": "user", "content": blocks}]


def _run(rule: str, record: RunRecord) -> list[str]:
    return CHECKS[rule].run(record, record.facts).violations


MISSING = {"c1": ("no result supplied for lookup", True), "c2": ("no result supplied for lookup", True)}


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_several_calls_passes_the_missing_result_filling_and_names_a_shorthand_landing(style: str) -> None:
    assert _run("relay.shorthand-several-calls", _record(style, MISSING, CALLS)) == []
    landed = _run("relay.shorthand-several-calls", _record(style, {"c1": ("sunny", False), "c2": MISSING["c2"]}, CALLS))
    assert landed == ["the shorthand output landed on c1 although the Request carries 2 calls; "
                      "the reference fills no slot from it"]


def test_several_calls_names_an_anthropic_slot_that_is_no_error() -> None:
    found = _run("relay.shorthand-several-calls", _record("anthropic", {"c1": ("", False), "c2": MISSING["c2"]}, CALLS))
    assert found == ["relay call c1 of a several-call Request answered by the shorthand got '' without is_error; "
                     "the reference gives it the missing-result error"]


def test_each_shorthand_rule_is_not_applicable_to_the_others_case() -> None:
    with pytest.raises(NotApplicable):
        _run("relay.shorthand-one-call-only", _record("openai", MISSING, CALLS))
    one = _record("openai", {"c1": ("sunny", False)}, CALLS[:1])
    with pytest.raises(NotApplicable):
        _run("relay.shorthand-several-calls", one)
    assert _run("relay.shorthand-one-call-only", one) == []
    broken = _run("relay.shorthand-one-call-only", _record("openai", {"c1": ("no result supplied for lookup", True)}, CALLS[:1]))
    assert broken == ["result for relay call c1 is 'no result supplied for lookup', expected 'sunny'"]
