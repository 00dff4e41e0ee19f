"""The scope a mutant runs on in the README's test command: chosen from a full-set run so it
hides no rule, and found out when it would (kill_scope)."""

from __future__ import annotations

from kill_runner import KillRun
from kill_scope import Fired, Pin, choose_scope, hidden_by, missing_now, scenario_id, stale

FULL = ["a", "b", "c", "d", "e", "quiet"]
FIRED = Fired(
    trusted={"rule.one": ["a", "b", "c"], "rule.two": ["c", "d"], "rule.three": ["e"]},
    untrusted_only={"rule.crash": ["d"]},
    gaps={"rule.gap": ["b", "e"]},
)


def _run(failures: dict[str, str], gaps: dict[str, list[str]] | None = None) -> KillRun:
    report = {"failures": {key: {"reason": reason} for key, reason in failures.items()}, "gaps": gaps or {}}
    return KillRun(("fixtures/scenarios/a.json",), 1, "", 0.0, report)


def test_the_scope_shows_each_rule_in_two_scenarios_and_keeps_a_quiet_control() -> None:
    scope = choose_scope(FULL, FIRED)
    assert hidden_by(scope, FIRED) == []
    assert "quiet" in scope
    # c shows rule.one and rule.two, e shows rule.three and the gap: fewer than the full set.
    assert len(scope) < len(FULL)
    for rule, scenarios in FIRED.trusted.items():
        assert len(set(scenarios) & set(scope)) == min(2, len(scenarios)), rule


def test_a_scope_missing_a_rule_or_its_second_scenario_is_named() -> None:
    hidden = hidden_by(["a", "c", "d", "e"], FIRED)
    assert hidden == ["rule.gap (gap) fired in ['b', 'e'] but the scope keeps ['e']"]
    hidden = hidden_by(["a", "b"], FIRED)
    assert "rule.three (trusted) fired in ['e'] but the scope keeps none of them" in hidden
    assert "rule.crash (untrusted) fired in ['d'] but the scope keeps none of them" in hidden


def test_fired_splits_trusted_untrusted_and_gaps_as_the_mutation_tests_judge() -> None:
    fired = Fired.of(_run(
        {"s1[openai-run]::rule.one": "divergence", "s2[openai-run]::rule.one": "transport",
         "s2[openai-run]::rule.crash": "transport", "s3[openai-run]::*": "capability"},
        gaps={"rule.gap": ["s1[openai-run]: looks odd"]},
    ))  # fmt: skip
    assert fired.trusted == {"rule.one": ["s1"]}
    assert fired.untrusted_only == {"*": ["s3"], "rule.crash": ["s2"]}
    assert fired.gaps == {"rule.gap": ["s1"]}


def test_a_scoped_run_missing_a_pinned_rule_says_to_re_pin() -> None:
    pin = Pin(FULL, choose_scope(FULL, FIRED), FIRED)
    now = Fired(trusted={"rule.one": ["a"], "rule.two": ["c"], "rule.three": ["e"]}, gaps={"rule.gap": ["e"]})
    assert missing_now(pin, now) == [
        "rule.crash: fired on the full set when pinned, not in the scope now (re-pin: python tests/mutants/pin_kill_scope.py)"
    ]
    assert missing_now(pin, FIRED) == []


def test_a_mutant_without_a_current_pin_is_stale() -> None:
    assert stale("no-such-mutant", ()) == "not pinned"
    assert stale("results-reversed", ("fixtures/scenarios/not-its-set.json",)) == (
        "its full set of scenarios changed since it was pinned"
    )
    assert scenario_id("fixtures/scenarios/loop-tool-loop.json") == "loop-tool-loop"


def test_the_scope_prefers_scenarios_with_fewer_variants() -> None:
    fired = Fired(trusted={"rule.one": ["big", "small", "tiny"]})
    cost = {"big": 12, "small": 2, "tiny": 1, "quiet-big": 12, "quiet-small": 4}
    assert choose_scope(list(cost), fired, cost) == ["quiet-small", "small", "tiny"]
    assert hidden_by(["big", "quiet-big"], fired) == [
        "rule.one (trusted) fired in ['big', 'small', 'tiny'] but the scope keeps ['big']"
    ]
