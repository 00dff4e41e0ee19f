"""The scope a mutant runs on in the README's test command: chosen from a full-set run so it
hides no rule, and found out when it would (kill_scope)."""

from __future__ import annotations

import pytest
from kill_runner import KillRun
from kill_scope import (
    Fired,
    Pin,
    choose_scope,
    choose_variants,
    hidden_by,
    hidden_variants,
    load_pins,
    missing_now,
    scenario_id,
    showing_variants,
    stale,
)

FULL = ["a", "b", "c", "d", "e", "quiet"]
FIRED = Fired(
    trusted={"rule.one": ["a", "b", "c"], "rule.two": ["c", "d"], "rule.three": ["e"]},
    untrusted_only={"rule.crash": ["d"]},
    gaps={"rule.gap": ["b", "e"]},
)


def _run(failures: dict[str, str], gaps: dict[str, list[str]] | None = None) -> KillRun:
    return KillRun(("fixtures/scenarios/a.json",), "", 0.0, failures, gaps or {})


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


def test_a_scoped_run_missing_a_pinned_rule_or_scenario_says_to_re_pin() -> None:
    pin = Pin(FULL, ["a", "c", "d", "e"], FIRED)
    everything = _run({"a[x]::rule.one": "divergence", "c[x]::rule.one": "divergence", "c[x]::rule.two": "divergence",
                       "d[x]::rule.two": "divergence", "e[x]::rule.three": "divergence", "d[x]::rule.crash": "transport"},
                      {"rule.gap": ["e[x]: odd"]})  # fmt: skip
    assert missing_now(pin, everything) == []
    # rule.two no longer fires in d, rule.crash not at all, the gap is gone: each is named.
    fewer = _run({"a[x]::rule.one": "divergence", "c[x]::rule.one": "divergence", "c[x]::rule.two": "divergence",
                  "e[x]::rule.three": "divergence"})  # fmt: skip
    re_pin = "not in the scope now (re-pin: python tests/mutants/pin_kill_scope.py)"
    assert missing_now(pin, fewer) == [
        f"rule.two (trusted): fired in ['d'] on the full set when pinned, {re_pin}",
        f"rule.gap (gap): fired in ['e'] on the full set when pinned, {re_pin}",
        f"rule.crash (untrusted): fired in ['d'] on the full set when pinned, {re_pin}",
    ]
    # Where the scope keeps a scenario the pin did not see the rule in, nothing is asked of it.
    assert missing_now(Pin(FULL, ["quiet"], FIRED), _run({})) == []


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


VARIANTS_OF = {"a": ["a[openai-run]", "a[openai-stream]", "a[anthropic-run]"],
               "quiet": ["quiet[openai-run]", "quiet[anthropic-run]"]}


def _full_run() -> KillRun:
    return _run(
        {"a[openai-stream]::rule.one": "divergence", "a[anthropic-run]::rule.one": "divergence",
         "a[anthropic-run]::rule.two": "divergence", "a[openai-run]::rule.crash": "transport"},
        gaps={"rule.gap": ["a[openai-stream]: looks odd"]},
    )  # fmt: skip


def test_the_kept_variants_show_every_rule_of_their_scenario_the_same_way() -> None:
    run = _full_run()
    fired = Fired.of(run)
    kept = choose_variants(["a", "quiet"], fired, showing_variants(run), VARIANTS_OF)
    # anthropic-run shows rule.one and rule.two, openai-run the crash, openai-stream the gap:
    # every variant of "a" is needed, so it runs whole; the control keeps its first variant.
    assert kept == {"quiet": ["quiet[openai-run]"]}
    calm = _run({"a[openai-stream]::rule.one": "divergence", "a[anthropic-run]::rule.one": "divergence",
                 "a[anthropic-run]::rule.two": "divergence"})
    kept = choose_variants(["a", "quiet"], Fired.of(calm), showing_variants(calm), VARIANTS_OF)
    assert kept == {"a": ["a[anthropic-run]"], "quiet": ["quiet[openai-run]"]}
    pin = Pin(["a", "quiet"], ["a", "quiet"], Fired.of(calm), kept)
    assert pin.scope_files() == ("fixtures/scenarios/a.json::a[anthropic-run]", "fixtures/scenarios/quiet.json::quiet[openai-run]")
    assert hidden_variants(pin, calm) == []


def test_a_trusted_rule_is_kept_where_it_fired_for_a_trusted_reason() -> None:
    run = _run({"a[openai-run]::rule.one": "transport", "a[anthropic-run]::rule.one": "divergence"})
    kept = choose_variants(["a"], Fired.of(run), showing_variants(run), VARIANTS_OF)
    assert kept == {"a": ["a[anthropic-run]"]}


def test_kept_variants_that_no_longer_show_a_rule_are_named() -> None:
    calm = _run({"a[anthropic-run]::rule.one": "divergence"})
    pin = Pin(["a"], ["a"], Fired.of(calm), {"a": ["a[openai-run]"]})
    assert hidden_variants(pin, calm) == [
        "rule.one (trusted) fired in a only in ['a[anthropic-run]'] but the scope keeps ['a[openai-run]']"
    ]


def test_a_gap_without_a_variant_keeps_the_whole_scenario() -> None:
    run = _run({}, gaps={"rule.gap": ["a: the whole scenario looks odd"]})
    assert choose_variants(["a"], Fired.of(run), showing_variants(run), VARIANTS_OF) == {}


def test_a_pin_keeping_a_variant_that_is_gone_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    import kill_scope

    name = next(iter(load_pins()))
    pin = load_pins()[name]
    monkeypatch.setitem(load_pins(), name, Pin(pin.full, pin.scope, pin.fired, {pin.scope[0]: [f"{pin.scope[0]}[no-such-variant]"]}))
    full = tuple(f"fixtures/scenarios/{s}.json" for s in pin.full)
    assert kill_scope.stale(name, full) == f"variants it keeps no longer exist: ['{pin.scope[0]}[no-such-variant]']"
