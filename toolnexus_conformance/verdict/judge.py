"""Judgement: a variant's outcomes, the port's expectations and the rule levels in, one
verdict per rule out — pass, fail, expected-fail, gap or n/a.

This is the only module that knows expectations and levels. It is pure: the expectations
come in as a :class:`Ledger` it only asks (which entry lists a key), and which entries
matched is read afterwards from the verdicts (``RuleVerdict.listed_entry``), not counted
here. An advisory rule's failure
is a spec gap, never a failure; a normative rule's failure listed in the expectations with
the same reason is an expected failure; a listed failure that passes now is reported so
the file is updated; when nothing could be evaluated, normative rules fail for that
reason and advisory ones are not applicable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from toolnexus_conformance.verdict.evaluate import FAIL, NOT_APPLICABLE, PASS, UNEVALUATED, Outcome

__all__ = ["NO_LEDGER", "VERDICTS", "Ledger", "Listing", "RuleVerdict", "Verdict", "judge", "rule_problem"]

VERDICTS = ("pass", "fail", "expected-fail", "gap", "n/a")


@dataclass(frozen=True)
class Listing:
    """What an expectations ledger says of one ``variant::rule`` key: the listed reason,
    whether the entry is marked flaky, and which entry it is (its position in its file;
    None when the listing stands for no single entry)."""

    reason: str
    flaky: bool = False
    entry: int | None = None


class Ledger(Protocol):
    """The expectations a verdict is judged against, asked and never changed."""

    def listing(self, key: str) -> Listing | None: ...

    def crashed(self, node_id: str, stderr: str) -> tuple[str, str] | None:
        """The rule whose listed root cause killed the port on ``node_id``, recognised in
        the dead shim's ``stderr``, and the text that recognised it; None when no entry
        names that death."""
        ...


class _NoLedger:
    def listing(self, key: str) -> Listing | None:
        return None

    def crashed(self, node_id: str, stderr: str) -> tuple[str, str] | None:
        return None


NO_LEDGER: Ledger = _NoLedger()  # nothing is listed: every failure is a failure


@dataclass(frozen=True)
class RuleVerdict:
    rule: str
    status: str  # one of VERDICTS
    level: str
    outcome: Outcome
    listed_reason: str | None  # the expectations entry's reason, when the failure is listed
    flaky: bool = False  # the entry says the port fails this only sometimes (a race in the port)
    listed_entry: int | None = None  # which entry of the ledger listed the key

    @property
    def unexpected_pass(self) -> bool:
        return self.status == "pass" and self.listed_reason is not None and not self.flaky

    @property
    def is_problem(self) -> bool:
        return self.status == "fail" or self.unexpected_pass


@dataclass(frozen=True)
class Verdict:
    node_id: str
    rules: tuple[RuleVerdict, ...]

    @property
    def failed(self) -> bool:
        return any(r.is_problem for r in self.rules)

    def key(self, rule: str) -> str:
        return f"{self.node_id}::{rule}"


def judge(node_id: str, outcomes: Iterable[Outcome], ledger: Ledger, level: Callable[[str], str]) -> Verdict:
    """``ledger.listing(key)`` gives what the expectations list for ``node::rule`` (or
    None); ``level(rule)`` gives ``normative`` or ``advisory``. A flaky entry's pass is not
    reported as a stale entry."""
    verdicts = []
    for outcome in outcomes:
        rule_level = level(outcome.rule)
        listing = ledger.listing(f"{node_id}::{outcome.rule}")
        reason = listing.reason if listing is not None else None
        status = _status(outcome, rule_level, reason)
        flaky = listing is not None and listing.flaky
        entry = listing.entry if listing is not None else None
        verdicts.append(RuleVerdict(outcome.rule, status, rule_level, outcome, reason, flaky, entry))
    return Verdict(node_id, tuple(verdicts))


def rule_problem(rv: RuleVerdict) -> str:
    """A problem verdict as the lines a failure report shows: the rule, its level and reason
    class, what the expectations listed, then the check's evidence."""
    head = f"[{rv.rule}] ({rv.level}, {rv.outcome.reason})"
    if rv.listed_reason is not None:
        head += f" — expected to fail as {rv.listed_reason!r}, failed as {rv.outcome.reason!r}"
    return "\n".join([head, *rv.outcome.evidence])


def _status(outcome: Outcome, level: str, listed_reason: str | None) -> str:
    if outcome.status == PASS:
        return "pass"
    if outcome.status == NOT_APPLICABLE:
        return "n/a"
    if outcome.status == UNEVALUATED and level == "advisory":
        return "n/a"
    if outcome.status == FAIL and level == "advisory":
        return "gap"
    if outcome.status not in {FAIL, UNEVALUATED}:
        raise ValueError(f"unknown outcome status {outcome.status!r} for {outcome.rule}")
    return "expected-fail" if listed_reason == outcome.reason else "fail"
