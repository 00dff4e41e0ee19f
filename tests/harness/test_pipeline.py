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
from toolnexus_conformance.verdict.expectations import Entry, Expectations, ExpectationsError
from toolnexus_conformance.verdict.expectations import load as load_expectations
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


CRASH = "fatal error: concurrent map iteration and map write"
DUMP = f"goroutine 7 [running]:\n{CRASH}\n\ngoroutine 1 [chan receive]:\nencoding/json.Marshal(...)\n"


def _race_ledger(tmp_path: Path, variants: list[str]) -> Expectations:
    path = tmp_path / "port.toml"
    listed = ", ".join(f'"{v}"' for v in variants)
    path.write_text(
        f'[[expected]]\nrule = "golden.observables"\nreason = "golden"\nflaky = true\ncrash = "{CRASH}"\nvariants = [{listed}]\n',
        encoding="utf-8",
    )
    return load_expectations(path)


def _died(stderr: str, ledger: Expectations) -> dict[str, tuple[str, str]]:
    variant = _variant()
    rules = ["golden.observables", "keys.run-result", "loop.final-text"]

    def run(_facts: Any, judged: list[str]) -> Ran:
        return Ran(None, tuple(unevaluated(judged, "transport", "the shim exited with status 2")), stderr)

    result = judge_variant(variant_facts(variant), run, rules, load_all(), ledger, lambda _rule: "normative")
    return {rv.rule: (rv.status, rv.outcome.evidence[0]) for rv in result.verdict.rules}


def test_a_shim_dying_of_a_listed_cause_is_that_cause_and_any_other_death_a_transport_failure(tmp_path: Path) -> None:
    node = f"{SCENARIO}[openai-run]"
    known = _died(DUMP, _race_ledger(tmp_path, [node]))
    assert known["golden.observables"][0] == "expected-fail"
    assert CRASH in known["golden.observables"][1]
    assert {known[r][0] for r in ("keys.run-result", "loop.final-text")} == {"n/a"}
    assert "golden.observables" in known["keys.run-result"][1]

    other_death = _died("panic: runtime error: index out of range\n", _race_ledger(tmp_path, [node]))
    assert {status for status, _ in other_death.values()} == {"fail"}, "an unlisted death must stay a failure"
    other_variant = _died(DUMP, _race_ledger(tmp_path, [f"{SCENARIO}[anthropic-run]"]))
    assert {status for status, _ in other_variant.values()} == {"fail"}, "a variant the entry does not list"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (f'rule = "golden.observables"\nreason = "golden"\ncrash = "{CRASH}"\nvariants = ["a[openai-run]"]', "crash needs flaky"),
        (f'key = "a[openai-run]::golden.observables"\nreason = "golden"\nflaky = true\ncrash = "{CRASH}"', "root-cause entry"),
        ('rule = "golden.observables"\nreason = "golden"\nflaky = true\ncrash = "a\\nb"\nvariants = ["a[openai-run]"]', "one line"),
    ],
)
def test_a_crash_text_belongs_to_a_flaky_root_cause_entry_on_one_line(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "port.toml"
    path.write_text(f"[[expected]]\n{entry}\n", encoding="utf-8")
    with pytest.raises(ExpectationsError, match=message):
        load_expectations(path)
