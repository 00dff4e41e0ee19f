"""Mutation testing of the conformance suite, for recall and for precision: every mutant
of the reference in the catalogue must be killed by exactly the rules it names (plus, at
most, the golden comparisons that see every observable) — a check that fires under another
rule's id fails here — with a readable failure; every normative rule of fixtures/rules.json
must have a mutant, and be killed in at least two distinct scenarios.

The mutant runs are pytest sessions of their own (pytest + a mutant shim each, over every
scenario that exercises the mutant's rules, every rule checked, read back from the JSON
conformance report), each in a process forked from a warm fork server (forked_pytest),
started together on a small pool the first time any mutant test asks, so the whole
catalogue costs about one mutant run per core rather than one after another. Under xdist,
every worker collects every mutant test, so the workers of one run claim each mutant in a
shared folder: each mutant runs once per test run, whatever the number of workers.
"""

from __future__ import annotations

import json
import os
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import forked_pytest
import pytest
from catalog import load
from kill_runner import GOLDEN_COMPANIONS, ROOT, UNTRUSTED_REASONS, KillReport, kill_once_per_run

MUTANTS = load()
WORKERS = max(2, os.cpu_count() or 2)
MIN_SCENARIOS_PER_RULE = 2


def normative_rules() -> list[str]:
    rules = json.loads((ROOT / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]
    return [r["id"] for r in rules if r["level"] == "normative"]


@pytest.fixture(scope="session")
def kill_reports(request: pytest.FixtureRequest) -> dict[str, Future[KillReport]]:
    wanted = [item.callspec.params["name"] for item in request.session.items
              if getattr(item, "originalname", "") == "test_mutant_is_killed" and hasattr(item, "callspec")]
    if any(getattr(item, "originalname", "") == "test_every_normative_rule_is_killed_in_two_scenarios"
           for item in request.session.items):
        wanted = sorted(MUTANTS)
    # Slowest first: the in-process relay mutant waits out the host's hold timeout.
    wanted.sort(key=lambda name: name != "sequential-calls")
    # xdist workers of one run share a folder named by the run's id, so each mutant runs once
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    shared = Path(tempfile.gettempdir()) / f"toolnexus-mutants-{run_id}" if run_id else None
    # Each thread claims a mutant and runs it in a process forked from a warm server.
    runner = forked_pytest.Forked()
    pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="mutant")
    futures = {name: pool.submit(kill_once_per_run, name, MUTANTS[name].kills, shared, runner) for name in wanted}
    yield futures
    pool.shutdown(wait=False, cancel_futures=True)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed(name: str, kill_reports: dict[str, Future[KillReport]]) -> None:
    mutant = MUTANTS[name]
    report = kill_reports[name].result()
    run = report.run
    problems = []
    if run.report is None:
        problems.append(f"the run wrote no conformance report (exit {run.returncode})")
    elif run.returncode == 0:
        problems.append("the mutant survived — every variant of the scenarios exercising its rules passed")
    for rule in mutant.kills:
        if run.report is not None and not report.killed_by(rule):
            reasons = report.reasons(rule)
            why = f"only as {sorted(reasons)} (a crash proves nothing)" if reasons & UNTRUSTED_REASONS else "not at all"
            problems.append(f"{rule}: the run failed but named [{rule}] {why}")
    fired = report.trusted()
    if run.report is not None:
        stray = sorted(set(fired) - set(mutant.kills) - set(mutant.also) - GOLDEN_COMPANIONS)
        for rule in stray:
            problems.append(f"{rule}: fired although the mutant does not break it (in {sorted(fired[rule])}) — "
                            "a check reporting under another rule's id, or a consequence ALSO_BREAKS should name")
        for rule in sorted(set(mutant.also) - set(fired)):
            problems.append(f"{rule}: listed in ALSO_BREAKS but did not fire (drop it from the catalogue)")
    if "has no check bound" in run.output or "harness bug: a check must judge" in run.output:
        problems.append("a rule was judged by a harness error (no check bound, or a check that raised), not by a check")
    harness_lines = [line for line in run.output.splitlines() if not line.lstrip().startswith("|")]
    if any("Traceback (most recent call last)" in line for line in harness_lines):
        problems.append("the harness printed a Python traceback (failures must be readable one-liners)")
    lines = [line for line in run.output.splitlines() if not line.startswith("rules not exercised")]
    tail = "\n".join(lines[-40:])
    assert not problems, (
        f"mutant {name!r} ({mutant.description}) is not killed as claimed:\n  "
        + "\n  ".join(problems) + f"\n--- last run output (tail) ---\n{tail}"
    )


@pytest.mark.timeout(1800)
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
