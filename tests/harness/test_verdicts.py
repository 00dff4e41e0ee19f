"""The verdict pipeline's pure parts: facts derived once from a scenario, evaluate (outcomes
without expectations), judge (verdicts from outcomes, expectations and levels), the host's
(Request, Answer) log, and the shared helpers for declared tool names and JSON type names."""

from __future__ import annotations

from typing import Any

import pytest

from toolnexus_conformance.helpers.json_types import json_type_name
from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.run.facts import facts_for
from toolnexus_conformance.run.host import Host, HostLog, HostRefusal, Store
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord
from toolnexus_conformance.scenario.declarations import declared_name
from toolnexus_conformance.scenario.model import Variant, load_scenario
from toolnexus_conformance.verdict.evaluate import Outcome, evaluate, failure_reason, unevaluated
from toolnexus_conformance.verdict.judge import NO_LEDGER, Listing, judge
from toolnexus_conformance.verdict.rules import Check, Forgiven, NotApplicable


def _variant(scenario: str, style: str = "openai", entry: str = "run") -> Variant:
    return Variant(load_scenario(fixtures_dir() / "scenarios" / f"{scenario}.json"), style, entry, uncalled_relay=False)


# -- facts ---------------------------------------------------------------------------------


def test_facts_hold_all_turns_in_serving_order_and_classify_calls() -> None:
    facts = facts_for(_variant("relay-auth-first-durable"))
    assert len(facts.first_turns) == 1 and len(facts.resume_turns) == 1
    assert facts.turns == facts.first_turns + facts.resume_turns
    assert [(c.id, c.kind) for c in facts.halting_turn or ()] == [("call_a1", "suspend"), ("call_w1", "relay")]
    assert facts.first_suspension == 0
    assert facts.durable and not facts.in_process
    assert facts.native_request(facts.calls["call_a1"]) == {
        "id": "auth-calendar-1", "kind": "authorization", "prompt": "Sign in to the calendar to continue",
        "url": "https://auth.example.invalid/calendar"}
    assert facts.calls["call_w1"].arguments == {"unit": "C", "city": "Oslo"}


def test_facts_of_an_in_process_scenario_give_the_scripted_answers() -> None:
    facts = facts_for(_variant("susp-inprocess-declined"))
    assert facts.in_process
    request = facts.native_request(next(c for c in facts.calls.values() if c.kind == "suspend"))
    assert request is not None
    answer = facts.scripted_answer(request["id"])
    assert answer is not None and answer["ok"] is False


# -- evaluate ------------------------------------------------------------------------------


def _record(variant: Variant, error: dict[str, Any] | None = None) -> RunRecord:
    record = RunRecord(variant, facts_for(variant))
    record.phases.append(PhaseRecord(entry=variant.entry, params={}, error=error))
    return record


def _checks(**fns: Any) -> dict[str, Check]:
    return {rule.replace("_", "."): Check(rule.replace("_", "."), fn) for rule, fn in fns.items()}


def _na(record: RunRecord, facts: Any) -> Any:
    raise NotApplicable("not this variant")


def test_evaluate_reports_each_rule_once_with_its_own_evidence() -> None:
    record = _record(_variant("loop-plain-answer"))
    checks = _checks(a_ok=lambda r, f: [], a_bad=lambda r, f: ["broken here"], a_na=_na,
                     a_gap=lambda r, f: [Forgiven("loop.assistant-content-null", "x: null vs empty")])
    outcomes = evaluate(record, record.facts, ["a.ok", "a.bad", "a.na", "a.gap", "a.unbound"], checks)
    assert outcomes == [
        Outcome("a.ok", "pass"),
        Outcome("a.bad", "fail", "divergence", ("broken here",)),
        Outcome("a.na", "n/a", evidence=("not this variant",)),
        Outcome("a.gap", "pass", forgiven=(Forgiven("loop.assistant-content-null", "x: null vs empty"),)),
        Outcome("a.unbound", "fail", "harness-error", ("rule a.unbound has no check bound to it (harness bug)",)),
    ]


def test_a_port_refusal_the_scenario_does_not_expect_is_a_port_error() -> None:
    refused = _record(_variant("loop-plain-answer"), error={"kind": "run", "message": "no"})
    assert failure_reason(refused, refused.facts) == "port-error"
    expected = _record(_variant("resume-answer-id-mismatch"), error={"kind": "resume", "message": "no"})
    assert failure_reason(expected, expected.facts) == "divergence"


# -- judge ---------------------------------------------------------------------------------


class _Ledger:
    """Expectations as the judge asks them: a reason per listed key, some keys flaky."""

    def __init__(self, listed: dict[str, str], flaky: set[str] | None = None) -> None:
        self._listed = listed
        self._flaky = flaky or set()

    def listing(self, key: str) -> Listing | None:
        reason = self._listed.get(key)
        return Listing(reason, key in self._flaky) if reason is not None else None


LEVELS = {"n.ok": "normative", "n.bad": "normative", "n.listed": "normative", "n.wrong-reason": "normative",
          "a.bad": "advisory", "n.na": "normative", "n.fixed": "normative"}


def test_judge_turns_outcomes_into_the_five_verdicts() -> None:
    outcomes = [
        Outcome("n.ok", "pass"), Outcome("n.bad", "fail", "divergence", ("x",)),
        Outcome("n.listed", "fail", "divergence", ("y",)), Outcome("n.wrong-reason", "fail", "port-error", ("z",)),
        Outcome("a.bad", "fail", "divergence", ("gap",)), Outcome("n.na", "n/a"), Outcome("n.fixed", "pass"),
    ]
    listed = {"v[s]::n.listed": "divergence", "v[s]::n.wrong-reason": "divergence", "v[s]::n.fixed": "divergence"}
    verdict = judge("v[s]", outcomes, _Ledger(listed), LEVELS.__getitem__)
    assert {r.rule: r.status for r in verdict.rules} == {
        "n.ok": "pass", "n.bad": "fail", "n.listed": "expected-fail", "n.wrong-reason": "fail",
        "a.bad": "gap", "n.na": "n/a", "n.fixed": "pass"}
    assert [r.rule for r in verdict.rules if r.unexpected_pass] == ["n.fixed"]
    assert verdict.failed


def test_nothing_evaluated_fails_normative_rules_and_leaves_advisory_ones_not_applicable() -> None:
    verdict = judge("v[s]", unevaluated(["n.ok", "a.bad"], "transport", "the shim crashed"), NO_LEDGER, LEVELS.__getitem__)
    assert [(r.rule, r.status, r.outcome.reason) for r in verdict.rules] == [
        ("n.ok", "fail", "transport"), ("a.bad", "n/a", "transport")]


def test_judge_refuses_an_unknown_outcome_status() -> None:
    with pytest.raises(ValueError, match="unknown outcome status 'maybe'"):
        judge("v[s]", [Outcome("n.ok", "maybe")], NO_LEDGER, LEVELS.__getitem__)


# -- the host's (Request, Answer) log ------------------------------------------------------


def test_the_host_logs_each_request_with_the_answer_it_gave() -> None:
    log = HostLog()
    host = Host({"answers": {"r1": {"ok": True, "data": {"output": "fine"}}}}, [], Store(), log)
    host.handle("host.waitFor", {"request": {"id": "r1", "kind": "input", "prompt": "p"}})
    host.handle("host.waitFor", {"request": {"id": "r2", "kind": "input", "prompt": "q"}})
    assert [(e.request["id"], e.answer) for e in log.exchanges] == [
        ("r1", {"id": "r1", "ok": True, "data": {"output": "fine"}}),
        ("r2", {"id": "r2", "ok": False, "reason": "declined"}),
    ]
    assert log.answers == [e.answer for e in log.exchanges]


def test_a_raising_host_logs_the_request_without_an_answer() -> None:
    log = HostLog()
    host = Host({"raise": True}, [], Store(), log)
    with pytest.raises(HostRefusal):
        host.handle("host.waitFor", {"request": {"id": "r1", "kind": "input", "prompt": "p"}})
    assert [(e.request["id"], e.answer) for e in log.exchanges] == [("r1", None)]
    assert log.answers == []


# -- shared helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "name"), [
    (None, "null"), (True, "boolean"), (3, "integer"), (3.5, "number"), ("s", "string"), ([], "array"),
    ({}, "object"), (object(), "non-JSON object")])
def test_json_type_names_use_json_schema_vocabulary(value: Any, name: str) -> None:
    assert json_type_name(value) == name


def test_declared_name_tells_the_styles_apart() -> None:
    openai = {"type": "function", "function": {"name": "f", "description": "", "parameters": {}}}
    anthropic = {"name": "g", "description": "", "input_schema": {}}
    assert declared_name(openai, "openai") == "f" and declared_name(openai) == "f"
    assert declared_name(anthropic, "anthropic") == "g" and declared_name(anthropic) == "g"
    assert declared_name(anthropic, "openai") is None
    assert declared_name("not a declaration") is None


def test_a_check_that_raises_is_a_readable_harness_error_not_a_traceback() -> None:
    record = _record(_variant("loop-plain-answer"))

    def choke(r: RunRecord, f: Any) -> Any:
        return ["x" in None]  # type: ignore[operator]

    [outcome] = evaluate(record, record.facts, ["a.choke"], _checks(a_choke=choke))
    assert (outcome.status, outcome.reason) == ("fail", "harness-error")
    assert outcome.evidence[0].startswith("the check raised TypeError: ")


def test_a_pass_of_a_flaky_entry_is_not_a_stale_entry_but_a_pass_of_a_plain_one_is() -> None:
    outcomes = [Outcome("n.ok", "pass")]
    listed = {"v[s]::n.ok": "divergence"}
    plain = judge("v[s]", outcomes, _Ledger(listed), LEVELS.__getitem__)
    flaky = judge("v[s]", outcomes, _Ledger(listed, flaky={"v[s]::n.ok"}), LEVELS.__getitem__)
    assert plain.rules[0].unexpected_pass and plain.rules[0].is_problem
    assert not flaky.rules[0].unexpected_pass and not flaky.rules[0].is_problem
    # a flaky entry still judges a failure by its reason
    failing = judge("v[s]", [Outcome("n.ok", "fail", "golden", "differs")], _Ledger(listed, flaky=set(listed)), LEVELS.__getitem__)
    assert failing.rules[0].status == "fail"
