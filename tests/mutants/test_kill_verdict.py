"""What the mutation tests say about one mutant's run (kill_verdict): each way a run can fail
to prove its mutant killed by exactly its rules is named, and a clean kill is not."""

from __future__ import annotations

from catalog import Mutant
from kill_runner import KillReport, KillRun
from kill_verdict import problems

MUTANT = Mutant("m", ("rule.one",), "breaks rule.one", lambda shim: None, also=("rule.also",))


def _report(failures: dict[str, str], output: str = "", gaps: dict[str, list[str]] | None = None) -> KillReport:
    return KillReport("m", KillRun(("fixtures/scenarios/s.json",), output, 0.0, failures, gaps or {}))


def test_a_kill_by_its_rules_and_what_it_also_breaks_is_clean() -> None:
    clean = _report({"s[openai-run]::rule.one": "divergence", "s[openai-run]::rule.also": "divergence",
                     "s[openai-run]::golden.observables": "golden"})  # fmt: skip
    assert problems(MUTANT, clean) == []


def test_a_survivor_is_named() -> None:
    assert "the mutant survived" in " ".join(problems(MUTANT, _report({})))


def test_a_kill_by_a_crash_proves_nothing() -> None:
    found = problems(MUTANT, _report({"s[openai-run]::rule.one": "transport", "s[openai-run]::rule.also": "divergence"}))
    assert found == ["rule.one: the run failed but named [rule.one] only as ['transport'] (a crash proves nothing)"]


def test_a_rule_it_does_not_break_is_named_with_its_scenarios() -> None:
    found = problems(MUTANT, _report({"s[openai-run]::rule.one": "divergence", "s[openai-run]::rule.also": "divergence",
                                      "s[openai-run]::rule.other": "divergence"}))  # fmt: skip
    assert len(found) == 1 and found[0].startswith("rule.other: fired although the mutant does not break it (in ['s'])")


def test_also_breaks_that_did_not_fire_is_named() -> None:
    assert problems(MUTANT, _report({"s[openai-run]::rule.one": "divergence"})) == [
        "rule.also: listed in ALSO_BREAKS but did not fire (drop it from the catalogue)"
    ]


def test_a_harness_error_and_a_traceback_are_named() -> None:
    errored = _report({"s[openai-run]::rule.one": "divergence", "s[openai-run]::rule.also": "divergence",
                       "s[openai-run]::golden.observables": "harness-error"},
                      output="FAILED s[openai-run]\n    Traceback (most recent call last):")  # fmt: skip
    found = problems(MUTANT, errored)
    assert "a rule was judged by a harness error (no check bound, or a check that raised), not by a check" in found
    assert "the harness printed a Python traceback (failures must be readable one-liners)" in found
    # A traceback in the shim's own stderr (its lines start with "|") is the shim's business.
    shim_said = _report({"s[openai-run]::rule.one": "divergence", "s[openai-run]::rule.also": "divergence"},
                        output="  | Traceback (most recent call last):")  # fmt: skip
    assert problems(MUTANT, shim_said) == []
