"""Rule checks: one function per SPEC.md rule id, registered with :func:`check`.

A scenario that cites a rule triggers its check on the variant's :class:`RunRecord`. A
check yields one readable message per violation; an empty result is a pass; raising
:class:`NotApplicable` says this variant does not exercise the rule (so the report can
tell "checked and passed" from "cited but never checked"). Advisory rules' messages are
spec gaps, not failures; the plugin decides that from the registry's level.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..runner import RunRecord

CheckFn = Callable[[RunRecord], Iterable[str]]


class NotApplicable(Exception):
    """The variant does not exercise this rule."""


@dataclass(frozen=True)
class Check:
    rule: str
    fn: CheckFn

    def run(self, record: RunRecord) -> list[str]:
        return list(self.fn(record))


CHECKS: dict[str, Check] = {}


def check(*rule_ids: str) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        for rule_id in rule_ids:
            if rule_id in CHECKS:
                raise RuntimeError(f"rule {rule_id} already has a check ({CHECKS[rule_id].fn.__name__})")
            CHECKS[rule_id] = Check(rule_id, fn)
        return fn

    return register


def load_all() -> dict[str, Check]:
    """Import every check module so their decorators run; return the registry."""
    from . import (  # noqa: F401
        assistant_turn,
        halted_transcript,
        keys,
        loop,
        relay,
        relay_answers,
        resume,
        store,
        stream,
        stream_fields,
        suspension,
        variations,
    )

    return CHECKS
