"""Mutation testing of the conformance suite: every mutant of the reference in the
catalogue must be killed, by the rules it names, with a readable failure; and every
normative rule of fixtures/rules.json must have at least one mutant.

The mutant runs are subprocesses (pytest + a mutant shim each), started together on a
small pool the first time any mutant test asks, so the whole catalogue costs about one
mutant run per core rather than one after another.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from catalog import load
from kill_runner import ROOT, UNTRUSTED_REASONS, KillReport, kill

MUTANTS = load()
WORKERS = max(2, os.cpu_count() or 2)


def normative_rules() -> list[str]:
    rules = json.loads((ROOT / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]
    return [r["id"] for r in rules if r["level"] == "normative"]


@pytest.fixture(scope="session")
def kill_reports(request: pytest.FixtureRequest) -> dict[str, Future[KillReport]]:
    wanted = [item.callspec.params["name"] for item in request.session.items
              if getattr(item, "originalname", "") == "test_mutant_is_killed" and hasattr(item, "callspec")]
    # Slowest first: the in-process relay mutant waits out the host's hold timeout.
    wanted.sort(key=lambda name: name != "sequential-calls")
    pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="mutant")
    futures = {name: pool.submit(kill, name, MUTANTS[name].kills) for name in wanted}
    yield futures
    pool.shutdown(wait=False, cancel_futures=True)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed(name: str, kill_reports: dict[str, Future[KillReport]]) -> None:
    mutant = MUTANTS[name]
    report = kill_reports[name].result()
    problems = []
    for rule in mutant.kills:
        run = report.run_for(rule)
        assert run is not None
        if run.returncode == 5:
            problems.append(f"{rule}: no scenario exercises it (pytest collected nothing), so nothing can kill this mutant")
        elif run.returncode == 0:
            problems.append(f"{rule}: the mutant survived — every variant citing the rule passed")
        elif not report.killed_by(rule):
            reasons = report.reasons(rule)
            why = f"only as {sorted(reasons)} (a crash proves nothing)" if reasons & UNTRUSTED_REASONS else "not at all"
            problems.append(f"{rule}: the run failed but named [{rule}] {why}")
        elif f"rule {rule} has no check bound" in run.output:
            problems.append(f"{rule}: killed by the 'no check bound' harness error, not by a check")
    for run in report.runs:
        harness_lines = [line for line in run.output.splitlines() if not line.lstrip().startswith("|")]
        if any("Traceback (most recent call last)" in line for line in harness_lines):
            problems.append("the harness printed a Python traceback (failures must be readable one-liners)")
    lines = [line for line in report.runs[-1].output.splitlines() if not line.startswith("rules not exercised")]
    tail = "\n".join(lines[-40:])
    assert not problems, (
        f"mutant {name!r} ({mutant.description}) is not killed as claimed:\n  "
        + "\n  ".join(problems) + f"\n--- last run output (tail) ---\n{tail}"
    )


def test_every_normative_rule_has_a_mutant() -> None:
    covered = {rule for m in MUTANTS.values() for rule in m.kills}
    missing = [rule for rule in normative_rules() if rule not in covered]
    assert not missing, "normative rules no mutant claims to be killed by:\n  " + "\n  ".join(missing)


def test_mutants_name_known_rules() -> None:
    known = set(normative_rules()) | {
        r["id"] for r in json.loads((ROOT / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]
    }
    unknown = {m.name: [r for r in m.kills if r not in known] for m in MUTANTS.values()}
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
