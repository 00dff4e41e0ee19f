"""Mutation testing of the conformance suite, for recall and for precision: every mutant
of the reference in the catalogue must be killed by exactly the rules it names (plus, at
most, the golden comparisons that see every observable) — a check that fires under another
rule's id fails here — with a readable failure; every normative rule of fixtures/rules.json
must have a mutant, and be killed in at least two distinct scenarios.

Each mutant's test judges its pinned scope (``kill_scope``: the fewest scenarios of its full
set that fire every rule the full set fires, each in two scenarios) on the mutant shim, in
this process, through the conformance session's pipeline (``kill_runner.kill``); the run
must fire every pinned rule in every scenario of the scope the pin says it fired in. So the
pins, which those tests hold to what the mutants do now, say where each rule is killed;
``tests/gates/test_mutant_full_sets.py`` runs the full sets and proves the scopes hide nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog import load
from kill_runner import ROOT, MutantShims, kill, scenario_files
from kill_scope import PIN_COMMAND, load_pins, missing_now, scoped_files, stale
from kill_verdict import message, problems

MUTANTS = load()
MIN_SCENARIOS_PER_RULE = 2


def normative_rules() -> list[str]:
    rules = json.loads((ROOT / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]
    return [r["id"] for r in rules if r["level"] == "normative"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed(name: str, shims: MutantShims) -> None:
    mutant = MUTANTS[name]
    report = kill(name, scoped_files(name), shims)
    found = problems(mutant, report)
    if not stale(name, scenario_files(mutant.kills)):
        found.extend(missing_now(load_pins()[name], report.run))
    assert not found, message(mutant, report, found)


def test_every_mutant_has_a_current_scope() -> None:
    """A mutant without a current pin runs on its full set: right, but the slow way."""
    unpinned = {name: why for name in sorted(MUTANTS) if (why := stale(name, scenario_files(MUTANTS[name].kills)))}
    extra = sorted(set(load_pins()) - set(MUTANTS))
    assert not unpinned and not extra, (
        f"tests/mutants/kill_scope.json is out of date (rewrite it: {PIN_COMMAND}):\n  "
        + "\n  ".join([*(f"{name}: {why}" for name, why in unpinned.items()), *(f"{name}: no such mutant" for name in extra)])
    )


def test_every_normative_rule_is_killed_in_two_scenarios() -> None:
    """A rule killed in one scenario only may be killed by an accident of that scenario.
    Read from the pins: each mutant's test holds its run to where its pin says it fired."""
    killed: dict[str, set[str]] = {}
    pins = load_pins()
    for name, mutant in MUTANTS.items():
        pin = pins.get(name)
        for rule in mutant.kills if pin is not None else ():
            killed.setdefault(rule, set()).update(set(pin.fired.trusted.get(rule, [])) & set(pin.scope))
    thin = {rule: sorted(killed.get(rule, set())) for rule in normative_rules()
            if len(killed.get(rule, set())) < MIN_SCENARIOS_PER_RULE}
    assert not thin, (
        f"normative rules killed in fewer than {MIN_SCENARIOS_PER_RULE} distinct scenarios "
        "(cite the rule in another scenario its mutant breaks, or add a mutant):\n  "
        + "\n  ".join(f"{rule}: {found}" for rule, found in sorted(thin.items()))
    )


def test_every_normative_rule_has_a_mutant() -> None:
    covered = {rule for m in MUTANTS.values() for rule in m.kills}
    missing = [rule for rule in normative_rules() if rule not in covered]
    assert not missing, "normative rules no mutant claims to be killed by:\n  " + "\n  ".join(missing)


def test_mutants_name_known_rules() -> None:
    known = set(normative_rules()) | {
        r["id"] for r in json.loads((ROOT / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]
    }
    unknown = {m.name: [r for r in (*m.kills, *m.also) if r not in known] for m in MUTANTS.values()}
    unknown = {k: v for k, v in unknown.items() if v}
    assert not unknown, f"mutants cite rule ids missing from fixtures/rules.json: {unknown}"
    assert all(m.kills for m in MUTANTS.values()), "every mutant names at least one rule"


def test_mutant_shim_refuses_unknown_names() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(Path(__file__).with_name("mutant_shim.py")), "no-such-mutant"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "expected one mutant name" in done.stderr and "results-reversed" in done.stderr
