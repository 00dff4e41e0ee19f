"""The mutants over their full sets: every mutant runs on every scenario that exercises one
of its rules (as the mutation tests did before scopes), must pass the mutation tests' own
assertions there, and its pinned scope (tests/mutants/kill_scope.json, what the README's test
command runs) must keep every rule this run fired, in as many scenarios as the scope
promises: the proof that the scoped runs hide nothing the full set would show.

A gate and not part of the README's test command: the full sets are some fifteen
conformance runs' worth of variants.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The mutation suite's modules live beside its tests; this gate reuses them as they are.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mutants"))

from catalog import load  # noqa: E402
from kill_runner import MutantShims, kill, scenario_files  # noqa: E402
from kill_scope import PIN_COMMAND, Fired, hidden_by, hidden_variants, load_pins, stale  # noqa: E402
from kill_verdict import message, problems  # noqa: E402
from warm_shims import mutant_shims  # noqa: E402

MUTANTS = load()
pytestmark = pytest.mark.slow  # every mutant over its full scenario set


@pytest.fixture(scope="module")
def shims() -> Iterator[MutantShims]:
    with mutant_shims() as started:
        yield started


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_full_set_shows_nothing_the_scope_hides(name: str, shims: MutantShims) -> None:
    mutant = MUTANTS[name]
    report = kill(name, scenario_files(mutant.kills), shims)
    found = problems(mutant, report)
    why = stale(name, report.run.files)
    if why:
        found.append(f"no scope to check ({why}): re-pin with {PIN_COMMAND}")
    else:
        pin = load_pins()[name]
        hidden = [*hidden_by(pin.scope, Fired.of(report.run)), *hidden_variants(pin, report.run)]
        found.extend(f"{one} (re-pin with {PIN_COMMAND})" for one in hidden)
    assert not found, message(mutant, report, found)
