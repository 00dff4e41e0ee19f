"""Rule checks: exactly one function per SPEC.md rule id, registered with :func:`check`.

A check receives the variant's :class:`RunRecord` (what was observed) and its
:class:`Facts` (what the scenario says should happen) and yields one readable message per
violation of *its own* rule; an empty result is a pass; raising :class:`NotApplicable` says
this variant does not exercise the rule (a style-specific rule is not applicable on the
other style), so the report can tell "checked and passed" from "cited but never checked".
A check may also yield :class:`Forgiven` items: differences a normalization row classifies
as a spec gap under another, advisory rule (the golden comparison does). Checks never see
expectations or rule levels; :mod:`toolnexus_conformance.verdict.judge` turns their outcomes into verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord

__all__ = [
    "Check", "CheckFn", "Finding", "Findings", "Forgiven", "NotApplicable", "check", "counterpart_of", "load_all",
    "only_style",
]


class NotApplicable(Exception):
    """The variant does not exercise this rule."""


@dataclass(frozen=True)
class Forgiven:
    """A difference forgiven by a normalization row, reported as a gap under ``rule``."""

    rule: str
    text: str


def counterpart_of(record: RunRecord, rule: str) -> dict[str, Any]:
    """The counterpart run's observables a relation compares with, or not applicable."""
    found = record.counterparts.get(rule)
    if found is None:
        raise NotApplicable("no counterpart run was recorded for this relation (judged in single-port runs only)")
    if found.observables is None:
        raise NotApplicable(found.why_not)
    return found.observables


Finding = str | Forgiven
CheckFn = Callable[[RunRecord, Facts], Iterable[Finding]]


@dataclass(frozen=True)
class Findings:
    violations: list[str] = field(default_factory=list)
    forgiven: list[Forgiven] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    rule: str
    fn: CheckFn

    def run(self, record: RunRecord, facts: Facts) -> Findings:
        found = Findings()
        for item in self.fn(record, facts):
            if isinstance(item, Forgiven):
                found.forgiven.append(item)
            else:
                found.violations.append(item)
        return found


CHECKS: dict[str, Check] = {}


def check(rule_id: str) -> Callable[[CheckFn], CheckFn]:
    """Bind the decorated function to ``rule_id``, and to nothing else: a function serving
    two rules would report one violation under both ids."""

    def register(fn: CheckFn) -> CheckFn:
        if rule_id in CHECKS:
            raise RuntimeError(f"rule {rule_id} already has a check ({CHECKS[rule_id].fn.__name__})")
        if any(c.fn is fn for c in CHECKS.values()):
            raise RuntimeError(f"{fn.__name__} is already bound to another rule; one check serves one rule")
        CHECKS[rule_id] = Check(rule_id, fn)
        return fn

    return register


def only_style(facts: Facts, style: str) -> None:
    """A style-specific rule says nothing about the other style's variants."""
    if facts.style != style:
        raise NotApplicable(f"{style} style only")


def load_all() -> dict[str, Check]:
    """Import every check module so their decorators run; return the registry."""
    from . import (  # noqa: F401
        assistant_turn,
        declarations,
        golden,
        halted_transcript,
        keys,
        loop,
        question,
        relay,
        relay_answers,
        rerun,
        resume,
        store,
        stream,
        stream_fields,
        suspension,
        variations,
    )

    return CHECKS
