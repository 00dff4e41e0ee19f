"""Evaluation: a variant's record and facts in, one outcome per rule out.

``evaluate`` is pure: it runs the one check bound to each rule id (the golden comparison
is one more check) and returns what each found — pass, fail (with the evidence) or not
applicable — and never reads expectations, rule levels or session state. When nothing
could be run (the shim broke, a capability is missing) ``unevaluated`` says so for every
rule. Turning outcomes into verdicts is :mod:`toolnexus_conformance.verdict.judge`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.verdict.rules import Check, Forgiven, NotApplicable

PASS, FAIL, NOT_APPLICABLE, UNEVALUATED = "pass", "fail", "n/a", "unevaluated"

# A check whose input another rule judges: when that rule fails on the same variant, this
# one is not judged (one port behaviour, one failure). The resume checks look results up in
# the halted transcript, which halt.transcript judges.
DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "resume.keeps-prior-results": ("halt.transcript",),
    "resume.replaces-placeholder": ("halt.transcript",),
    "resume.fills-later-slots": ("halt.transcript",),
    "resume.one-result-per-call": ("halt.transcript",),
    # halt.transcript judges the halted transcript whole; later calls' results kept in it are
    # the more specific halt.later-suspensions-dropped's.
    "halt.transcript": ("halt.later-suspensions-dropped",),
    # The placeholder is compared with the surfaced Request: the wrong one surfaced is
    # susp.first-in-order's failure.
    "susp.placeholder": ("susp.first-in-order",),
    # A result taken for a suspension although its metadata.pending is no Request leaves a
    # RunResult and transcript built from a Request that is not one (no prompt, no text).
    "keys.run-result": ("susp.pending-marker",),
    "keys.transcript": ("susp.pending-marker",),
    # A generated-id Request is tied to its call by what it asks; a question Request that asks
    # the wrong thing cannot be tied to its question call.
    "stream.pending-event": ("susp.question-kind",),
    # A rerun replays the halted transcript: an ask's from the store. A transcript the halt
    # broke, an ask that saved no halt or loaded no history leave it nothing right to replay.
    "resume.rerun-with-transcript": ("halt.transcript", "store.ask-saves-halt", "store.ask-loads-history"),
}
# Comparisons that catch what no specific rule names: not judged on a variant where a more
# specific rule failed. The golden comparison also yields to a failed relation, the
# comparison with the pre-relay build to the stream-versus-run relation.
CATCH_ALL: dict[str, frozenset[str]] = {
    "golden.observables": frozenset({"golden.observables"}),
    "absent.byte-identical": frozenset({"golden.observables", "absent.byte-identical"}),
    "stream.same-observables": frozenset({"golden.observables", "absent.byte-identical", "stream.same-observables"}),
}


@dataclass(frozen=True)
class Outcome:
    """What one rule's check found on one variant.

    ``reason`` classifies a failure: ``divergence`` (the port did something else),
    ``port-error`` (the port refused where the scenario expects no error), ``golden`` (a
    golden comparison), ``harness-error`` (the check itself raised, or the rule has none), or, for
    ``unevaluated``, ``transport``/``capability``.
    ``forgiven`` holds differences a normalization row reports under an advisory rule.
    """

    rule: str
    status: str  # pass | fail | n/a | unevaluated
    reason: str = ""
    evidence: tuple[str, ...] = ()
    forgiven: tuple[Forgiven, ...] = field(default=())
    # A failure not judged because the rules in ``depends_on`` failed on the variant, and the
    # failure itself (a cross-port run still places it in a phase).
    depends_on: tuple[str, ...] = ()
    superseded: Outcome | None = None


def failure_reason(record: RunRecord, facts: Facts) -> str:
    """``port-error`` when the port refused although the scenario expects no error."""
    refused = any(p.error is not None for p in record.phases)
    return "port-error" if refused and not facts.expected_error else "divergence"


def evaluate(
    record: RunRecord, facts: Facts, rules: Iterable[str], checks: Mapping[str, Check], *, one_cause: bool = True
) -> list[Outcome]:
    """Every rule's outcome on the record. With ``one_cause`` (a single port's run), a failure
    another rule's failure explains is not judged (``DEPENDS_ON``, ``CATCH_ALL``); a
    cross-port run places every failure in a phase instead, so it keeps them all."""
    outcomes = []
    for rule in rules:
        check = checks.get(rule)
        if check is None:
            outcomes.append(Outcome(rule, FAIL, "harness-error", (f"rule {rule} has no check bound to it (harness bug)",)))
            continue
        try:
            found = check.run(record, facts)
        except NotApplicable as exc:
            outcomes.append(Outcome(rule, NOT_APPLICABLE, evidence=(str(exc),)))
            continue
        except Exception as exc:  # noqa: BLE001 - a check choking on port data is reported, not raised
            why = f"the check raised {type(exc).__name__}: {exc} (harness bug: a check must judge any port data)"
            outcomes.append(Outcome(rule, FAIL, "harness-error", (why,)))
            continue
        forgiven = tuple(found.forgiven)
        if not found.violations:
            outcomes.append(Outcome(rule, PASS, forgiven=forgiven))
            continue
        reason = "golden" if rule == "golden.observables" else failure_reason(record, facts)
        outcomes.append(Outcome(rule, FAIL, reason, tuple(found.violations), forgiven))
    return _not_judged_on_failed_inputs(outcomes, record, facts, checks) if one_cause else outcomes


def _not_judged_on_failed_inputs(
    outcomes: list[Outcome], record: RunRecord, facts: Facts, checks: Mapping[str, Check]
) -> list[Outcome]:
    """A failure whose input another rule found broken on this variant is not judged."""
    failed = {o.rule for o in outcomes if o.status == FAIL}
    evaluated = {o.rule for o in outcomes}
    # A phase that returned neither a RunResult nor a port error observed nothing a specific
    # rule could name: the comparison's difference stands.
    observed = all(phase.result is not None or phase.error is not None for phase in record.phases)
    out = []
    for outcome in outcomes:
        broken: list[str] = []
        if outcome.status == FAIL and outcome.rule in CATCH_ALL and observed:
            # A difference a specific rule names is that rule's, reported once there (as a
            # failure, or as a spec gap where the rule is advisory).
            broken = sorted(failed - CATCH_ALL[outcome.rule])
        elif outcome.status == FAIL:
            broken = [
                dep for dep in DEPENDS_ON.get(outcome.rule, ())
                if dep in failed or (dep not in evaluated and _fails(dep, record, facts, checks))
            ]
        if broken:
            why = f"not judged: depends on {', '.join(broken)}, which failed on this variant (reported there)"
            outcome = Outcome(outcome.rule, NOT_APPLICABLE, evidence=(why,), depends_on=tuple(broken), superseded=outcome)
        out.append(outcome)
    return out


def _fails(rule: str, record: RunRecord, facts: Facts, checks: Mapping[str, Check]) -> bool:
    """Whether ``rule``'s check fails on the record (for a prerequisite not selected itself)."""
    check = checks.get(rule)
    if check is None:
        return False
    try:
        return bool(check.run(record, facts).violations)
    except Exception:  # noqa: BLE001 - not applicable or a broken check: no prerequisite failure
        return False


def unevaluated(rules: Iterable[str], reason: str, why: str) -> list[Outcome]:
    """Nothing could be checked (``transport`` or ``capability``): every rule says why."""
    return [Outcome(rule, UNEVALUATED, reason, (why,)) for rule in rules]
