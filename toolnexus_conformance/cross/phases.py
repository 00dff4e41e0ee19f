"""Which phase of a cross-port resume a rule's failure comes from: the halting phase (run
on the halting port) or the resume phase (run on the resuming port).

A cross run is judged by the same checks and goldens as a single-port run; this module only
says where a failure lies, so the report names the port that ran the failing phase and the
right port's expectations can explain it. It decides from the data, not from wording:

- a golden comparison: the path of every difference names its phase (``$.phases[N]``);
- any other check: it is run again on the record cut after the halting phase. What it
  still finds there, the halting phase alone shows; what the whole record adds, the resume
  phase brought.

When the halting phase already fails a rule and the resume phase seems to add to it, the
resume replayed a transcript that differs from the reference's halt: ``cross_oracle`` then
compares with the reference's resume of the same halt. A failure the oracle explains is the
halting port's; one it does not is both ports' (``joint``: both must list it to be known).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from toolnexus_conformance.golden.compare import compare_variant
from toolnexus_conformance.golden.files import read_golden
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.verdict.evaluate import Outcome
from toolnexus_conformance.verdict.rules import Check, NotApplicable
from toolnexus_conformance.verdict.rules.golden import GOLDEN_RULES, golden_payload

HALTING, RESUMING = "halting", "resume"
PHASE_PATH = re.compile(r"^\$\.phases\[(\d+)\]")
BOTH = (HALTING, RESUMING)


@dataclass(frozen=True)
class Attribution:
    """The phases a failing rule's evidence lies in (``HALTING`` and/or ``RESUMING``)."""

    phases: tuple[str, ...]
    how: str  # how it was decided, for the report
    joint: bool = False  # both phases shown to fail on their own: both ports answer for it

    @property
    def owners(self) -> tuple[str, ...]:
        """The phases whose ports answer for the failure: both when ``joint``, else the
        earliest failing one (a resume not judged apart from its halt is the halt's)."""
        if self.joint:
            return self.phases
        return (HALTING,) if HALTING in self.phases else (RESUMING,)

    @property
    def needs_oracle(self) -> bool:
        return self.phases == BOTH and not self.joint


def attribute(outcome: Outcome, record: RunRecord, facts: Facts, checks: Mapping[str, Check]) -> Attribution:
    """Where ``outcome`` (a failure of one rule on a cross run's ``record``) lies."""
    if outcome.reason in {"transport", "capability", "scenario"}:
        return Attribution(BOTH, "nothing could be checked")
    if outcome.rule in GOLDEN_RULES:
        return _golden(record, facts)
    check = checks.get(outcome.rule)
    if check is None:
        return Attribution(BOTH, "no check bound to the rule")
    return _by_cut(outcome, check, record, facts)


def halting_only(record: RunRecord) -> RunRecord:
    """The record as it stood when the halting port handed the halt over."""
    return RunRecord(
        record.variant,
        record.facts,
        phases=record.phases[:1],
        declarations=record.declarations,
        declaration_error=record.declaration_error,
    )


def _golden(record: RunRecord, facts: Facts) -> Attribution:
    golden = read_golden(facts.scenario_id, facts.variant_name)
    if golden is None or "observables" not in golden:
        return Attribution(BOTH, "no golden to split by phase")
    comparison = compare_variant(golden["observables"], golden_payload(record, facts)["observables"], facts)
    phases: set[str] = set()
    for difference in comparison.failures:
        found = PHASE_PATH.match(difference.path.strip())
        if found is None:
            return Attribution(BOTH, f"a difference outside any phase ({difference.path})")
        phases.add(HALTING if found.group(1) == "0" else RESUMING)
    if not phases:
        return Attribution(BOTH, "the golden comparison failed without a difference (stale golden?)")
    return Attribution(tuple(p for p in BOTH if p in phases), "golden difference paths")


def _by_cut(outcome: Outcome, check: Check, record: RunRecord, facts: Facts) -> Attribution:
    try:
        cut = [v for v in check.run(halting_only(record), facts).violations]
    except NotApplicable:
        cut = []
    except Exception as exc:  # noqa: BLE001 - a check choking on the cut record says nothing about the port
        return Attribution(BOTH, f"the check raised {type(exc).__name__} on the halting phase alone")
    phases = [HALTING] if cut else []
    if set(outcome.evidence) - set(cut):
        phases.append(RESUMING)
    if not phases:  # a failure without evidence: nothing to place it by
        return Attribution(BOTH, "the failure carries no evidence to place")
    return Attribution(tuple(phases), "check run on the halting phase alone and on the whole run")
