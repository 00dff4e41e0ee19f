"""Evaluation: a variant's record and facts in, one outcome per rule out.

``evaluate`` is pure: it runs the one check bound to each rule id (the golden comparison
is one more check) and returns what each found — pass, fail (with the evidence) or not
applicable — and never reads expectations, rule levels or session state. When nothing
could be run (the shim broke, a capability is missing) ``unevaluated`` says so for every
rule. Turning outcomes into verdicts is :mod:`harness.judge`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .facts import Facts
from .rules import Check, Forgiven, NotApplicable
from .rules.golden import GOLDEN_RULES
from .runner import RunRecord

PASS, FAIL, NOT_APPLICABLE, UNEVALUATED = "pass", "fail", "n/a", "unevaluated"


@dataclass(frozen=True)
class Outcome:
    """What one rule's check found on one variant.

    ``reason`` classifies a failure: ``divergence`` (the port did something else),
    ``port-error`` (the port refused where the scenario expects no error), ``golden`` (a
    golden comparison), ``harness-error`` (the check itself raised), or, for
    ``unevaluated``, ``transport``/``capability``.
    ``forgiven`` holds differences a normalization row reports under an advisory rule.
    """

    rule: str
    status: str  # pass | fail | n/a | unevaluated
    reason: str = ""
    evidence: tuple[str, ...] = ()
    forgiven: tuple[Forgiven, ...] = field(default=())


def failure_reason(record: RunRecord, facts: Facts) -> str:
    """``port-error`` when the port refused although the scenario expects no error."""
    refused = any(p.error is not None for p in record.phases)
    return "port-error" if refused and not facts.expected_error else "divergence"


def evaluate(record: RunRecord, facts: Facts, rules: Iterable[str], checks: Mapping[str, Check]) -> list[Outcome]:
    outcomes = []
    for rule in rules:
        check = checks.get(rule)
        if check is None:
            outcomes.append(Outcome(rule, FAIL, "divergence", (f"rule {rule} has no check bound to it (harness bug)",)))
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
        reason = "golden" if rule in GOLDEN_RULES else failure_reason(record, facts)
        outcomes.append(Outcome(rule, FAIL, reason, tuple(found.violations), forgiven))
    return outcomes


def unevaluated(rules: Iterable[str], reason: str, why: str) -> list[Outcome]:
    """Nothing could be checked (``transport`` or ``capability``): every rule says why."""
    return [Outcome(rule, UNEVALUATED, reason, (why,)) for rule in rules]
