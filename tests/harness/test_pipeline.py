"""The verdict pipeline: checks are functions of (record, facts), the judge leaves the
expectations as they were, and a result survives the trip an xdist worker's export makes."""

from __future__ import annotations

import builtins
import os
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord
from toolnexus_conformance.scenario.model import Variant, load_scenario
from toolnexus_conformance.verdict.evaluate import Outcome, evaluate, unevaluated
from toolnexus_conformance.verdict.expectations import Entry, Expectations
from toolnexus_conformance.verdict.judge import NO_LEDGER
from toolnexus_conformance.verdict.pipeline import Ran, Results, judge_variant, variant_facts
from toolnexus_conformance.verdict.rules import load_all

SCENARIO = "loop-plain-answer"


def _variant() -> Variant:
    return Variant(load_scenario(fixtures_dir() / "scenarios" / f"{SCENARIO}.json"), "openai", "run", uncalled_relay=False)


def _no_file_access(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a check touched the file system")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(os, "stat", refuse)
    for name in ("stat", "read_bytes", "read_text", "open", "exists", "is_file"):
        monkeypatch.setattr(Path, name, refuse)


def test_a_check_given_the_same_record_and_facts_twice_gives_the_same_outcomes_without_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    variant = _variant()
    facts = variant_facts(variant)  # the goldens are read here, before any check runs
    record = RunRecord(variant, facts)
    record.phases.append(PhaseRecord(entry="run", params={}, result={"status": "done", "text": "not the golden's"}))
    checks = load_all()
    rules = ["golden.observables", "loop.max-turns-exhaustion", "keys.run-result"]
    # Process-wide tables (the normalization rows, the schemas) load once, on first use.
    first = evaluate(record, facts, rules, checks)
    with monkeypatch.context() as patched:
        _no_file_access(patched)
        second = evaluate(record, facts, rules, checks)
        third = evaluate(record, facts, rules, checks)
    assert first == second == third
    golden = next(o for o in first if o.rule == "golden.observables")
    # compared with the golden the facts hold (not "no golden"): it differs from this record
    assert golden.status == "fail" and golden.reason == "golden", golden
    assert "observables differ from the golden" in golden.evidence[0]


def test_the_judge_asks_the_ledger_and_changes_nothing_matches_are_counted_from_the_results() -> None:
    variant = _variant()
    facts = variant_facts(variant)
    key = f"{facts.node_id}::keys.run-result"
    expectations = Expectations(None, [Entry(key, "transport")])

    def broken_run(_facts: Any, rules: list[str]) -> Ran:
        return Ran(None, tuple(unevaluated(rules, "transport", "the shim crashed")), "stderr tail")

    result = judge_variant(facts, broken_run, ["keys.run-result", "keys.transcript"], load_all(), expectations,
                           lambda _rule: "normative")
    assert {rv.rule: rv.status for rv in result.verdict.rules} == {"keys.run-result": "expected-fail", "keys.transcript": "fail"}
    assert result.failed and result.stderr_tail == "stderr tail"
    assert expectations.entries[0].matched == 0, "judging counted a match"
    results = Results([result])
    expectations.count_matches(results.listed_entries())
    assert expectations.unmatched() == []


def test_a_results_stream_survives_the_export_an_xdist_worker_hands_its_controller() -> None:
    variant = _variant()
    facts = variant_facts(variant)

    def one_failure(_facts: Any, rules: list[str]) -> Ran:
        return Ran(None, (Outcome("keys.run-result", "fail", "divergence", ("x",)),
                          Outcome("golden.observables", "n/a", evidence=("why",),
                                  superseded=Outcome("golden.observables", "fail", "golden", ("d",)))))

    result = judge_variant(facts, one_failure, [], load_all(), NO_LEDGER, lambda _rule: "normative")
    stream = Results([result])
    back = Results.from_export(stream.export())
    assert list(back) == list(stream)
    assert back.tally().counts == stream.tally().counts
    assert [key for key, _ in back.failures()] == [f"{facts.node_id}::keys.run-result"]
