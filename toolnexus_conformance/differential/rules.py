"""The rules of a differential search: which normative rules each generated scenario
exercised (its reach), and which rules the port under test breaks where the expected port
does not (its findings, beside the observable comparison).

**Findings.** A port can agree with the expected port on every observable and still break a
rule whose check reads more than the observables: a host whose waitFor holds until N
callbacks are outstanding answers a port that calls back one at a time after its hold runs
out (toolnexus_conformance/run/host.py), with the same answers, and only the host's log says so. So after
both ports ran a variant, every normative rule's check (toolnexus_conformance/verdict/rules/, through
:func:`toolnexus_conformance.verdict.evaluate.evaluate`, as the suite runs them) judges the port's run, and a rule
failing there but not on the expected port's run is a finding under that rule, kept only when
a second run of the scenario shows it again (a check may read what timing decides: the order
of a turn's events, a hold on a loaded machine; a port's rule failure reproduces). When the two
records hold the same data everywhere a check can look (:func:`same_records`), every check
must judge them alike and their observables are the same, so the port's run is neither
judged nor compared: most scenarios agree.

**Reach.** Each check says whether a variant exercises its rule (anything but
"not applicable", the suite's summary's "ran"); run on the expected port's records, it says
which normative rules a scenario exercised. The comparison rules are relations between two
runs, not checks of one: ``golden.observables`` is what every comparison of the search is,
``absent.byte-identical`` what a relay-free one is. Counting reach is a cheap equivalent of
judging everything: once a worker has seen a rule exercised :data:`REACH_CAP` times it stops
asking that rule's check about the expected port's runs (except where the port's run is
judged anyway), so a count is exact below the cap and "at least the cap" at it; either way
it depends on the scenarios drawn, not on timing. The rules the generator cannot reach are
listed, each with the reason, in ``differential_unreachable.json`` beside this module.
"""

from __future__ import annotations

import json
import marshal
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.verdict.evaluate import FAIL, NOT_APPLICABLE, evaluate
from toolnexus_conformance.verdict.rules import Check, load_all
from toolnexus_conformance.verdict.selection import load_rules

EVIDENCE_CHARS = 300  # of a finding's first evidence line, as printed
REACH_CAP = 25  # per worker: scenarios a rule must be seen exercised in before reach stops asking its check
UNREACHABLE_FILE = Path(__file__).with_name("unreachable.json")
# Relations between two runs, judged by the search's comparison itself, never by a check of one run.
RELATIONS = ("golden.observables", "absent.byte-identical", "relay.uncalled-inert", "stream.same-observables")


@cache
def normative_rules() -> tuple[str, ...]:
    """Every normative rule of fixtures/rules.json, in its order."""
    return tuple(rule.id for rule in load_rules().values() if rule.level == "normative")


@cache
def checked_rules() -> tuple[str, ...]:
    """The normative rules a check of one run judges (every one but the relations)."""
    return tuple(r for r in normative_rules() if r not in RELATIONS)


def load_checks() -> None:
    """Import every rule's check and read the rule catalogue: what a :class:`RuleJudge` needs."""
    load_all()
    checked_rules()


def unreachable() -> dict[str, str]:
    """The rules the default generator cannot reach, each with the reason (the data file)."""
    data = json.loads(UNREACHABLE_FILE.read_text(encoding="utf-8"))
    return {entry["rule"]: entry["reason"] for entry in data["unreachable"]}


def comparison_rule(variant: Variant) -> str:
    """The relation a comparison of this variant's two runs proves."""
    return "absent.byte-identical" if variant.scenario.relay_free else "golden.observables"


@dataclass(frozen=True)
class ScenarioVerdict:
    """What one scenario showed: its rendered observable differences and the relation they
    fall under, the rule findings (rule, rendered line), and the normative rules it exercised
    on the expected port (subject to the reach cap)."""

    differences: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    findings: tuple[tuple[str, str], ...] = ()
    ran: frozenset[str] = frozenset()

    @property
    def failures(self) -> tuple[str, ...]:
        return (*self.differences, *(line for _, line in self.findings))

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules the scenario breaks, the comparison's relation first."""
        return tuple(dict.fromkeys([*self.relations, *(rule for rule, _ in self.findings)]))

    def __bool__(self) -> bool:
        return bool(self.differences or self.findings)

    def confirmed_by(self, again: ScenarioVerdict) -> ScenarioVerdict:
        """This verdict with only the rule findings ``again`` (a second run of the same
        scenario) shows too: a check may read what timing decides (an order of events, a
        hold on a loaded machine), and a port's rule failure reproduces."""
        kept = {rule for rule, _ in again.findings}
        return replace(self, findings=tuple((rule, line) for rule, line in self.findings if rule in kept))


@dataclass
class RuleJudge:
    """Judges the rules of one worker's scenarios; shared by its shim pairs' threads."""

    cap: int = REACH_CAP
    checks: dict[str, Check] = field(default_factory=load_all)
    _seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def judge(self, variants: Sequence[Variant], facts: Sequence[Facts], expected: Sequence[RunRecord],
              actual: Sequence[RunRecord], compare: Callable[[Variant, RunRecord, RunRecord], list[str]]) -> ScenarioVerdict:
        """``compare``: a variant's rendered observable differences between the two runs. The
        observables are a part of what :func:`same_records` compares, so records the same
        there show none, and only records that are not the same are compared."""
        with self._lock:
            wanted = [r for r in checked_rules() if self._seen[r] < self.cap]
        counted = set(wanted)
        lines: list[str] = []
        relations: list[str] = []
        findings: list[tuple[str, str]] = []
        ran: set[str] = set()
        for variant, f, want, got in zip(variants, facts, expected, actual, strict=True):
            ran.add(comparison_rule(variant))
            if same_records(want, got):
                ran |= _ran(evaluate(want, f, wanted, self.checks))
                continue
            differs = compare(variant, want, got)
            if differs:
                lines += differs
                relations.append(comparison_rule(variant))
            judged_got = evaluate(got, f, checked_rules(), self.checks)
            failing_here = {o.rule for o in judged_got if o.status == FAIL}
            # The expected port's run is judged on what reach still counts and what fails here
            # (a rule failing on both runs is no finding); a check's outcome is the same
            # whichever other rules are judged beside it.
            judged_want = evaluate(want, f, [r for r in checked_rules() if r in counted or r in failing_here], self.checks)
            ran |= _ran(judged_want)
            failing_there = {o.rule for o in judged_want if o.status == FAIL}
            for outcome in judged_got:
                if outcome.status == FAIL and outcome.rule not in failing_there:
                    evidence = outcome.evidence[0].splitlines()[0] if outcome.evidence else ""
                    if len(evidence) > EVIDENCE_CHARS:
                        evidence = evidence[:EVIDENCE_CHARS] + "…"
                    findings.append((outcome.rule, f"{variant.name}: [{outcome.rule}] ({outcome.reason}) {evidence}"))
        with self._lock:
            self._seen.update(ran)
        return ScenarioVerdict(tuple(lines), tuple(dict.fromkeys(relations)), tuple(findings), frozenset(ran))


def _ran(outcomes: Iterable[Any]) -> set[str]:
    return {o.rule for o in outcomes if o.status != NOT_APPLICABLE}


def same_records(want: RunRecord, got: RunRecord) -> bool:
    """Whether the two records hold the same data everywhere a check may read (what was
    sent, answered, emitted, executed, saved and refused; not how long a hold waited), and
    so everywhere their observables (toolnexus_conformance/run/observables.py) are taken from."""
    try:
        return marshal.dumps(_checked_view(want), 2) == marshal.dumps(_checked_view(got), 2)
    except ValueError:  # a value marshal cannot write: judged, to be safe
        return False


def _checked_view(record: RunRecord) -> Any:
    """The record as the checks may read it, less what differs between any two runs: the
    provider session each run gets (its base URL, its paths' prefix) and the timings."""
    phases = []
    for p in record.phases:
        host = p.host
        hold = (host.hold.outstanding, host.hold.timed_out) if host.hold is not None else None
        base = p.params.get("baseUrl")
        session = urlsplit(base).path.rsplit("/v1", 1)[0] if isinstance(base, str) else ""
        paths = [path.removeprefix(session) for path in p.request_paths] if session else p.request_paths
        params = {k: v for k, v in p.params.items() if k != "baseUrl"}
        metrics = [{k: v for k, v in m.items() if k != "ms"} if isinstance(m, dict) else m for m in p.metrics]
        phases.append((p.entry, params, p.requests, paths, p.request_headers, p.result, p.events, metrics,
                       p.executions, p.error, p.provider_violations, host.wait_for, host.hooks, host.saves, host.gets,
                       host.violations, host.max_outstanding, [(e.request, e.answer) for e in host.exchanges], hold))
    return record.declarations, record.declaration_error, phases


@dataclass
class Reach:
    """Per normative rule, in how many generated scenarios a search saw it exercised."""

    tried: int = 0
    ran: Counter[str] = field(default_factory=Counter)
    capped: frozenset[str] = frozenset()  # rules whose count is "at least"

    @classmethod
    def of(cls, verdicts: Iterable[ScenarioVerdict], cap: int = REACH_CAP) -> Reach:
        """One worker's reach over the verdicts of the scenarios it generated."""
        listed = list(verdicts)
        ran: Counter[str] = Counter(rule for v in listed for rule in v.ran)
        capped = frozenset(r for r, n in ran.items() if n >= cap and r in checked_rules())
        return cls(len(listed), Counter({r: (cap if r in capped else n) for r, n in ran.items()}), capped)

    def __add__(self, other: Reach) -> Reach:
        return Reach(self.tried + other.tried, self.ran + other.ran, self.capped | other.capped)

    def missing(self) -> list[str]:
        """Normative rules no scenario exercised."""
        return [r for r in normative_rules() if not self.ran[r]]

    def render(self) -> list[str]:
        listed = unreachable()
        lines = [f"rule reach: normative rules exercised, in how many of {self.tried} generated scenarios "
                 f"(ran: the check judged it; n/a: not applicable; '≥' where counting stopped at the cap)"]
        for rule in normative_rules():
            count = self.ran[rule]
            if rule in self.capped:
                lines.append(f"  {rule}: ran ≥{count}")
            elif count:
                lines.append(f"  {rule}: ran {count}, n/a {self.tried - count}")
            elif rule in listed:
                lines.append(f"  {rule}: unreachable by generation ({listed[rule]})")
            else:
                lines.append(f"  {rule}: NOT REACHED (n/a in all {self.tried})")
        reached = sum(1 for r in normative_rules() if self.ran[r])
        lines.append(f"rule reach: {reached} of {len(normative_rules())} normative rules reached, "
                     f"{sum(1 for r in normative_rules() if not self.ran[r] and r in listed)} listed unreachable, "
                     f"{len(self.missing()) - sum(1 for r in self.missing() if r in listed)} not reached")
        return lines
