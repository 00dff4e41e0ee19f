"""The one verdict pipeline: facts → run → record → evaluate → judge → a result.

Every caller that turns a variant into verdicts goes through :func:`judge_variant`: the
plugin's items (one port), cross-port resume (a halt on one port, the resume on another),
the differential (a generated scenario, judged without an expectations file) and, through
the plugin's items, the mutation tests. What differs between them is passed in, never
copied: how the variant is run (``run``, given the facts and the rules to judge, returns a
:class:`Ran`), which rules are judged (:mod:`.selection` decides, once, before the call),
the expectations (a :class:`~.judge.Ledger` the judge only asks), and, for a run whose
failures are placed before they are judged (cross-port resume's phases), a ``settle`` step
between evaluation and judgement that may also name the ledger the placed failures answer to.

Facts are derived with the goldens their checks compare with already read
(:func:`variant_facts`), so a check is a function of ``(record, facts)``. A
:class:`Result` is a value; callers append it to a :class:`Results` stream, and the tally,
the reports, the expectations' matches, the run's coverage and the xdist merge are all
read from that stream.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolnexus_conformance.golden.files import read_goldens
from toolnexus_conformance.run.facts import Facts, Goldens, facts_for
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.verdict.evaluate import FAIL, NOT_APPLICABLE, UNEVALUATED, Outcome, evaluate
from toolnexus_conformance.verdict.judge import Ledger, RuleVerdict, Verdict, judge
from toolnexus_conformance.verdict.rules import Check, Forgiven
from toolnexus_conformance.verdict.rules.golden import reference_version

__all__ = ["Ran", "Relate", "Result", "Results", "Settle", "Tally", "judge_variant", "variant_facts"]

# How a verdict is counted in the tally (the report's columns).
TALLY_COLUMN = {"pass": "pass", "fail": "fail", "expected-fail": "expected", "gap": "gap", "n/a": "n/a"}

UNCALLED_SUFFIX = "-uncalled-relay"
STDERR_LINES_SHOWN = 15  # of a failed variant's shim stderr, in its failure and the report


def variant_facts(variant: Variant) -> Facts:
    """The variant's facts with the goldens its checks compare with: its own, and (for a
    variant with the uncalled relay tool) its base variant's."""
    facts = facts_for(variant)
    names = (variant.name, variant.name.removesuffix(UNCALLED_SUFFIX))
    found, errors = read_goldens(variant.scenario.id, names)
    return replace(facts, goldens=Goldens(found, errors, reference_version()))


@dataclass(frozen=True)
class Ran:
    """What running a variant gave: the record to evaluate, or (``record`` None) the
    outcomes known without the checks (a transport, capability or scenario problem); the
    shim's stderr tail; and the rules the run settled itself (a golden written instead of
    compared), which are not evaluated."""

    record: RunRecord | None
    unevaluated: tuple[Outcome, ...] = ()
    stderr_tail: str = ""
    not_checked: frozenset[str] = frozenset()
    transcript: tuple[tuple[str, str], ...] = ()  # the shim's JSON-RPC lines of this run (direction, line)


# The scenario-level stage, for the port-relative relations (scenario/relations.py): given
# the rules to judge, it starts what may run beside the variant (a counterpart on a shim of
# its own) and returns what fills the record's counterparts once the run is over (called
# with None when the run gave no record, so nothing is left running).
Relate = Callable[[list[str]], Callable[[RunRecord | None], None]]

# Between evaluation and judgement: the outcomes (and the ledger they answer to) as placed.
Settle = Callable[[list[Outcome], RunRecord | None, Facts], tuple[list[Outcome], Ledger]]


@dataclass(frozen=True)
class Result:
    """One variant's verdict as data: what the tally, reports and renderings read."""

    scenario_id: str
    variant_name: str
    verdict: Verdict
    stderr_tail: str = ""
    skipped: str = ""  # why the variant was not run (it has no verdicts then)
    rerun: str = ""  # the command that reruns the variant, as its failure printed it

    def stderr_lines(self) -> list[str]:
        """The stderr tail as a failure shows it: its last lines."""
        return self.stderr_tail.strip().splitlines()[-STDERR_LINES_SHOWN:]

    @property
    def node_id(self) -> str:
        return self.verdict.node_id

    @property
    def failed(self) -> bool:
        return self.verdict.failed

    def export(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario_id,
            "variant": self.variant_name,
            "node": self.verdict.node_id,
            "rules": [_rule_verdict_data(rv) for rv in self.verdict.rules],
            "stderr": self.stderr_tail,
            "skipped": self.skipped,
            "rerun": self.rerun,
        }

    @classmethod
    def from_export(cls, data: Mapping[str, Any]) -> Result:
        verdict = Verdict(data["node"], tuple(_rule_verdict(rv) for rv in data["rules"]))
        return cls(data["scenario"], data["variant"], verdict, data["stderr"], data["skipped"], data["rerun"])


def judge_variant(
    facts: Facts,
    run: Callable[[Facts, list[str]], Ran],
    rules: list[str],
    checks: Mapping[str, Check],
    ledger: Ledger,
    level: Callable[[str], str],
    *,
    relate: Relate | None = None,
    settle: Settle | None = None,
) -> Result:
    """Run the variant (and, with ``relate``, the counterparts its relations compare with),
    evaluate ``rules`` on its record, judge the outcomes against ``ledger``. Without
    ``settle`` a failure another failure explains is not judged (one cause, one failure);
    with it, every failure is kept for ``settle`` to place."""
    related = relate(rules) if relate is not None else None
    ran: Ran | None = None
    try:
        ran = run(facts, rules)
    finally:
        if related is not None:
            related(ran.record if ran is not None else None)
    if ran.record is None:
        outcomes = list(ran.unevaluated)
        if settle is None:
            outcomes = _known_crash(outcomes, facts.node_id, ran.stderr_tail, ledger)
    else:
        judged = [r for r in rules if r not in ran.not_checked]
        outcomes = evaluate(ran.record, facts, judged, checks, one_cause=settle is None)
    if settle is not None:
        outcomes, ledger = settle(outcomes, ran.record, facts)
    verdict = judge(facts.node_id, outcomes, ledger, level)
    return Result(facts.scenario_id, facts.variant_name, verdict, ran.stderr_tail)


def _known_crash(outcomes: list[Outcome], node_id: str, stderr: str, ledger: Ledger) -> list[Outcome]:
    """A shim that died of a root cause the ledger lists with its crash text: the failure is
    that cause's rule's, and the other rules are not judged (one cause, one failure). Any
    other death stays a transport failure of every rule."""
    if not any(o.status == UNEVALUATED and o.reason == "transport" for o in outcomes):
        return outcomes
    crashed = ledger.crashed(node_id, stderr)
    if crashed is None or crashed[0] not in {o.rule for o in outcomes}:
        return outcomes
    rule, text = crashed
    listing = ledger.listing(f"{node_id}::{rule}")
    reason = listing.reason if listing is not None else "divergence"
    died = next((line.strip() for line in stderr.splitlines() if text in line), text)
    out = []
    for outcome in outcomes:
        if outcome.rule == rule:
            evidence = (f"the shim died of this rule's listed cause: {died}", *outcome.evidence)
            out.append(Outcome(rule, FAIL, reason, evidence))
        else:
            why = f"not judged: the shim died of {rule}'s listed cause (reported there)"
            out.append(Outcome(outcome.rule, NOT_APPLICABLE, evidence=(why,), depends_on=(rule,), superseded=outcome))
    return out


@dataclass
class Tally:
    """Per rule: how many checks actually ran and how they came out, and in which scenarios
    a check ran (not n/a); computed from a results stream."""

    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    gaps: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    scenarios: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, result: Result) -> None:
        verdict = result.verdict
        for rv in verdict.rules:
            self.counts[rv.rule][TALLY_COLUMN[rv.status]] += 1
            if rv.status == "expected-fail":
                self.counts[rv.rule][f"expected:{rv.outcome.reason}"] += 1
            if rv.status != "n/a":
                self.scenarios[rv.rule].add(result.scenario_id)
            if rv.status == "gap":
                self.gaps[rv.rule].extend(f"{verdict.node_id}: {m}" for m in rv.outcome.evidence)
            for forgiven in rv.outcome.forgiven:
                self.gaps[forgiven.rule].append(forgiven.text)


class Results:
    """The results stream of a run, in the order the variants were judged."""

    def __init__(self, items: Iterable[Result] = ()) -> None:
        self._items: list[Result] = list(items)

    def append(self, result: Result) -> None:
        self._items.append(result)

    def extend(self, results: Iterable[Result]) -> None:
        self._items.extend(results)

    def __iter__(self) -> Iterator[Result]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def tally(self) -> Tally:
        tally = Tally()
        for result in self._items:
            tally.add(result)
        return tally

    def judged(self) -> Iterator[tuple[str, str]]:
        """(scenario id, variant name) of every variant that got a verdict or was skipped."""
        return ((r.scenario_id, r.variant_name) for r in self._items)

    def listed_entries(self) -> Iterator[int]:
        """The ledger position of every listed key a verdict was judged against."""
        return (rv.listed_entry for r in self._items for rv in r.verdict.rules if rv.listed_entry is not None)

    def failed(self) -> Iterator[Result]:
        """Every result whose verdict is a problem (the variant's test failed)."""
        return (r for r in self._items if r.failed)

    def failures(self) -> Iterator[tuple[str, RuleVerdict]]:
        """Every failing or expected-failing verdict, with its ``variant::rule`` key."""
        for result in self._items:
            for rv in result.verdict.rules:
                if rv.status in {"fail", "expected-fail"}:
                    yield result.verdict.key(rv.rule), rv

    def export(self) -> list[dict[str, Any]]:
        """Plain JSON-able data (an xdist worker hands the controller this)."""
        return [r.export() for r in self._items]

    @classmethod
    def from_export(cls, data: Iterable[Mapping[str, Any]]) -> Results:
        return cls(Result.from_export(item) for item in data)


def _outcome_data(outcome: Outcome) -> dict[str, Any]:
    return {
        "rule": outcome.rule,
        "status": outcome.status,
        "reason": outcome.reason,
        "evidence": list(outcome.evidence),
        "forgiven": [[f.rule, f.text] for f in outcome.forgiven],
        "dependsOn": list(outcome.depends_on),
        "superseded": _outcome_data(outcome.superseded) if outcome.superseded is not None else None,
    }


def _outcome(data: Mapping[str, Any]) -> Outcome:
    superseded = data["superseded"]
    return Outcome(
        data["rule"],
        data["status"],
        data["reason"],
        tuple(data["evidence"]),
        tuple(Forgiven(rule, text) for rule, text in data["forgiven"]),
        tuple(data["dependsOn"]),
        _outcome(superseded) if superseded is not None else None,
    )


def _rule_verdict_data(rv: RuleVerdict) -> dict[str, Any]:
    return {
        "rule": rv.rule,
        "status": rv.status,
        "level": rv.level,
        "outcome": _outcome_data(rv.outcome),
        "listedReason": rv.listed_reason,
        "flaky": rv.flaky,
        "listedEntry": rv.listed_entry,
    }


def _rule_verdict(data: Mapping[str, Any]) -> RuleVerdict:
    return RuleVerdict(
        data["rule"], data["status"], data["level"], _outcome(data["outcome"]), data["listedReason"], data["flaky"],
        data["listedEntry"],
    )
