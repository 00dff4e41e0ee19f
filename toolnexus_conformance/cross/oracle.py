"""The reference's resume of the same halt: the oracle for a resume phase whose halt already
differs from the reference's.

A golden is the reference's resume of the *reference's* halt. When the halting port's halt
differs from it, a difference in the resume phase may be the halt carried over (the resuming
port replayed a different transcript) or the resuming port's own. To tell them apart the
variant runs once more — the halt on the same halting port, the resume on the reference —
and the resuming port's failure is compared with that run: a rule whose resume-phase
findings the reference's resume of the same halt shows too is the halt's alone; one it does
not show is the resuming port's as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from toolnexus_conformance.cross.phases import BOTH, HALTING, Attribution
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.golden.compare import compare_variant
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.observables import observables
from toolnexus_conformance.run.runner import RunRecord, ShimLike, run_variant
from toolnexus_conformance.verdict.evaluate import Outcome
from toolnexus_conformance.verdict.rules import Check, NotApplicable
from toolnexus_conformance.verdict.rules.golden import GOLDEN_RULES


@dataclass(frozen=True)
class Oracle:
    """The variant with its halt on the halting port and its resume on the reference."""

    record: RunRecord | None
    why_not: str = ""  # why there is no oracle run (it broke, or the halt did not replay)


def oracle_run(
    record: RunRecord, facts: Facts, halting: ShimLike, reference: ShimLike, provider: FakeProvider, timeout: float
) -> Oracle:
    try:
        again = run_variant(record.variant, halting, provider, timeout=timeout, facts=facts, resume_shim=reference)
    except HarnessError as exc:
        return Oracle(None, f"the oracle run broke: {exc}")
    halt_then, halt_now = (normalize(observables(r))["phases"][:1] for r in (record, again))
    if compare_variant({"phases": halt_then}, {"phases": halt_now}, facts).failures:
        return Oracle(None, "the halting port's halt did not replay the same way")
    return Oracle(again)


def judge_apart(
    outcome: Outcome, place: Attribution, record: RunRecord, facts: Facts, oracle: Oracle, checks: Mapping[str, Check]
) -> Attribution:
    """``place`` (both phases implicated) decided against the oracle."""
    if oracle.record is None:
        return Attribution(BOTH, f"{place.how}; the resume phase is not judged apart: {oracle.why_not}")
    if outcome.rule in GOLDEN_RULES:
        mine, theirs = (normalize(observables(r))["phases"][1:] for r in (record, oracle.record))
        differences = compare_variant({"phases": theirs}, {"phases": mine}, facts).failures
        if not differences:
            return Attribution((HALTING,), "the resume phase equals the reference's resume of the same halt")
        first = differences[0].render().strip().replace("$.phases[0]", "$.phases[1]", 1).replace(": golden ", ": reference ", 1)
        return Attribution(BOTH, f"the resume phase differs from the reference's resume of the same halt too: {first}", joint=True)
    check = checks.get(outcome.rule)
    try:
        shown = set(check.run(oracle.record, facts).violations) if check is not None else set()
    except NotApplicable:
        shown = set()
    except Exception as exc:  # noqa: BLE001 - reported as undecided, never raised
        return Attribution(BOTH, f"{place.how}; the check raised {type(exc).__name__} on the oracle run")
    own = [v for v in outcome.evidence if v not in shown]
    if not own:
        return Attribution((HALTING,), "the reference's resume of the same halt shows the same findings")
    return Attribution(BOTH, f"the reference's resume of the same halt does not show: {own[0][:120]}", joint=True)
