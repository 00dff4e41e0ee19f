"""Mutation testing of the conformance suite, for recall and for precision: every mutant
of the reference in the catalogue must be killed by exactly the rules it names (plus, at
most, the golden comparisons that see every observable) — a check that fires under another
rule's id fails here — with a readable failure; every normative rule of fixtures/rules.json
must have a mutant, and be killed in at least two distinct scenarios.

The mutant runs are pytest sessions of their own (pytest + a mutant shim each, every rule
checked, read back from the JSON conformance report), run together on a small pool
(``kill_pool``). Here each mutant runs on its pinned scope (``kill_scope``): the fewest
scenarios of its full set that fire every rule the full set fires, each in two scenarios;
``tests/gates/test_mutant_full_sets.py`` runs the full sets and proves the scopes hide nothing.
The pass starts when collection ends and runs beside the session's other tests
(``conftest.py``, ``scoped_pool``); the ``kill_reports`` fixture hands its futures to the tests.
"""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path

import pytest
from catalog import load
from kill_runner import ROOT, KillReport, scenario_files
from kill_scope import PIN_COMMAND, Fired, load_pins, missing_now, stale
from kill_verdict import message, problems

MUTANTS = load()
MIN_SCENARIOS_PER_RULE = 2


def normative_rules() -> list[str]:
    rules = json.loads((ROOT / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]
    return [r["id"] for r in rules if r["level"] == "normative"]


@pytest.mark.timeout(900)
@pytest.mark.late
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed(name: str, kill_reports: dict[str, Future[KillReport]]) -> None:
    mutant = MUTANTS[name]
    report = kill_reports[name].result()
    found = problems(mutant, report)
    pin = None if stale(name, scenario_files(mutant.kills)) else load_pins()[name]
    if pin is not None and report.run.report is not None:
        found.extend(missing_now(pin, Fired.of(report.run)))
    assert not found, message(mutant, report, found)


def test_every_mutant_has_a_current_scope() -> None:
    """A mutant without a current pin runs on its full set: right, but the slow way."""
    unpinned = {name: why for name in sorted(MUTANTS) if (why := stale(name, scenario_files(MUTANTS[name].kills)))}
    extra = sorted(set(load_pins()) - set(MUTANTS))
    assert not unpinned and not extra, (
        f"tests/mutants/kill_scope.json is out of date (rewrite it: {PIN_COMMAND}):\n  "
        + "\n  ".join([*(f"{name}: {why}" for name, why in unpinned.items()), *(f"{name}: no such mutant" for name in extra)])
    )


@pytest.mark.timeout(1800)
@pytest.mark.late
def test_every_normative_rule_is_killed_in_two_scenarios(kill_reports: dict[str, Future[KillReport]]) -> None:
    """A rule killed in one scenario only may be killed by an accident of that scenario."""
    killed: dict[str, set[str]] = {}
    for name, future in kill_reports.items():
        fired = future.result().trusted()
        for rule in MUTANTS[name].kills:
            killed.setdefault(rule, set()).update(fired.get(rule, set()))
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
