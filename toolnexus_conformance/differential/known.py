"""A differential run that knows the known: rule-level findings on generated scenarios,
filtered through the port's expectations, and a search that goes on past what is known.

:func:`findings` judges one generated scenario the way the suite would judge it if the
scenario were a fixture whose goldens came from the expected port (``--against``): per
variant, the golden comparison (the expected port's normalized observables are the golden,
so the failing rule is ``golden.observables`` or, relay-free, ``absent.byte-identical``, reason
class ``golden``), and every other rule the variant is judged on (cited + implicit) by its
check on the port's run (each port's run goes through the verdict pipeline,
:mod:`toolnexus_conformance.verdict.pipeline`, judged with no expectations), reason class as
:mod:`toolnexus_conformance.verdict.evaluate` gives it. Advisory rules
are gaps, never findings. A rule whose check fails on the expected port's run too is not
the port's difference: it is kept apart as a finding against the expected port.

**Explained** (the definition the whole module uses): a finding is explained by an
expectations entry with the same rule (``*`` standing for any run of characters) and reason
class *whose observation matches the finding's*: for a golden finding, every differing JSON
path (indexes as ``[*]``) is one the entry's note names; for any other finding, the first
line of its evidence has the entry note's shape (quoted text, numbers and ids masked). The
entries' variants are ignored, because a generated scenario has no entry of its own. So a
port known to fail ``golden.observables`` at one place does not explain a difference at
another, and a rule failing in a new way is a new finding. Notes are cut at 300 characters,
so a long observation's tail cannot explain anything.

:func:`search` draws up to ``examples`` scenarios, tallies the explained findings per rule
and reason, and for each unexplained kind (rule, reason) has hypothesis shrink the first
scenario showing it to the smallest one that still shows that same kind; then it searches
on, past the kinds already reported. Results are cached per scenario, so a re-run of the
generator over examples already tried costs nothing.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import Phase, find, settings
from hypothesis.errors import NoSuchExample

from toolnexus_conformance.differential.search import TIMEOUT_S, Features, as_scenario, scenarios, search_settings
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.golden.compare import compare_variant
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.run.facts import Facts, facts_for
from toolnexus_conformance.run.observables import observables
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.verdict.evaluate import Outcome
from toolnexus_conformance.verdict.expectations import Expectations
from toolnexus_conformance.verdict.judge import NO_LEDGER
from toolnexus_conformance.verdict.pipeline import Ran, Result, judge_variant
from toolnexus_conformance.verdict.rules import Check, load_all
from toolnexus_conformance.verdict.rules.golden import GOLDEN_RULES, golden_owner
from toolnexus_conformance.verdict.selection import load_rules, rules_of

Kind = tuple[str, str]  # (rule, reason class)
MAX_PATHS = 6  # per known golden kind, the most frequent first differing paths the summary lists


@dataclass(frozen=True)
class Finding:
    """One rule failing on one variant of a generated scenario."""

    variant: str
    rule: str
    reason: str
    evidence: str
    paths: tuple[str, ...] = ()  # golden findings: every differing path, indexes generalized to [*]

    @property
    def kind(self) -> Kind:
        return self.rule, self.reason

    def render(self) -> str:
        return f"{self.variant}: [{self.rule}] ({self.reason}) {self.evidence}"


@dataclass(frozen=True)
class Judged:
    """What one generated scenario showed: the port's findings, and the rules whose checks
    failed on the expected port's own run (a harness or reference matter, not the port's)."""

    port: tuple[Finding, ...]
    against: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class KnownCause:
    """One expectations entry as the search reads it: rule pattern, reason class, and the
    observation its note holds (its JSON paths, generalized, and its shape)."""

    rule: str
    reason: str
    paths: frozenset[str]
    shape: str

    def explains(self, finding: Finding) -> bool:
        if self.reason != finding.reason or not _rule_matches(self.rule, finding.rule):
            return False
        if self.reason == "capability":
            return True  # a capability the port does not declare: nothing was observed
        if finding.paths:
            return set(finding.paths) <= self.paths
        return bool(self.shape) and observation_shape(finding.evidence) == self.shape


@dataclass(frozen=True)
class Known:
    """A port's expectations, as causes a finding may be explained by."""

    causes: tuple[KnownCause, ...]

    @property
    def pairs(self) -> frozenset[Kind]:
        """The (rule pattern, reason class) pairs the entries name."""
        return frozenset((c.rule, c.reason) for c in self.causes)

    @property
    def noted(self) -> frozenset[str]:
        """Every JSON path the entries' notes mention, generalized."""
        return frozenset(path for c in self.causes for path in c.paths)

    @classmethod
    def from_expectations(cls, expectations: Expectations) -> Known:
        causes = []
        for e in expectations.entries:
            observed = e.note.split(": ", 1)[1] if e.rule is not None and ": " in e.note else e.note
            paths = frozenset(generalized(p).rstrip(":") for p in re.findall(r"\$[^\s,]*", observed))
            causes.append(KnownCause(e.rule or e.key.split("::", 1)[1], e.reason, paths, observation_shape(observed)))
        return cls(tuple(causes))

    def explains(self, finding: Finding) -> bool:
        return any(cause.explains(finding) for cause in self.causes)


def observation_shape(text: str) -> str:
    """The first line of an observation with its values masked: quoted text, numbers, and
    words with digits or underscores (call ids, Request ids) become ``_``."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    masked = re.sub(r"'[^']*'|\"[^\"]*\"", "_", first)
    masked = re.sub(r"\b\w*[\d_]\w*\b", "_", masked)
    masked = re.sub(r"_(?:\s*,\s*_)+", "_", masked)  # a list of values, however long
    return " ".join(masked.split())[:120]


def generalized(path: str) -> str:
    """A JSON path with its list indexes as ``[*]``: the same place in another scenario."""
    return re.sub(r"\[\d+\]", "[*]", path)


def _rule_matches(pattern: str, rule: str) -> bool:
    if "*" not in pattern:
        return pattern == rule
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), rule) is not None


@dataclass
class Judge:
    """Runs generated scenarios through the expected port and the port under test."""

    expected: ShimSession
    actual: ShimSession
    provider: FakeProvider
    checks: dict[str, Check] = field(default_factory=load_all)
    levels: dict[str, str] = field(default_factory=lambda: {r.id: r.level for r in load_rules().values()})

    def findings(self, scenario: dict[str, Any]) -> Judged:
        port: list[Finding] = []
        against: list[Finding] = []
        for variant in as_scenario(scenario).variants():
            if variant.uncalled_relay:  # as in differ(): its rule compares with the base variant
                continue
            mine, theirs = self._variant(variant)
            port += mine
            against += theirs
        return Judged(tuple(port), tuple(against))

    def _variant(self, variant: Variant) -> tuple[list[Finding], list[Finding]]:
        facts = facts_for(variant)
        rules = [r for r in rules_of(variant) if r not in GOLDEN_RULES and self.levels.get(r, "normative") == "normative"]
        owner = golden_owner(uncalled_relay=False)
        try:
            want, there = self._judged(variant, self.expected, facts, rules)
        except HarnessError as exc:
            return [], [Finding(variant.name, owner, "transport", _first_line(exc))]
        try:
            got, here = self._judged(variant, self.actual, facts, rules)
        except HarnessError as exc:
            return [Finding(variant.name, rule, "transport", _first_line(exc)) for rule in [owner, *rules]], []
        failing_there = {rv.rule for rv in there.verdict.rules if rv.status == "fail"}
        mine: list[Finding] = []
        theirs: list[Finding] = []
        golden = compare_variant(normalize(observables(want)), normalize(observables(got)), variant).failures
        if golden:
            paths = tuple(sorted({generalized(d.path) for d in golden}))
            mine.append(Finding(variant.name, owner, "golden", golden[0].render().strip(), paths))
        for rv in here.verdict.rules:
            if rv.status == "fail":
                (theirs if rv.rule in failing_there else mine).append(_finding(variant, rv.outcome))
        return mine, theirs

    def _judged(self, variant: Variant, shim: ShimSession, facts: Facts, rules: list[str]) -> tuple[RunRecord, Result]:
        """One port's run of the variant through the verdict pipeline, judged with no
        expectations (every failure of a normative rule is one); a broken run raises."""
        ran: list[RunRecord] = []

        def run(facts: Facts, _rules: list[str]) -> Ran:
            ran.append(run_variant(variant, shim, self.provider, timeout=TIMEOUT_S, facts=facts))
            return Ran(ran[0])

        result = judge_variant(facts, run, rules, self.checks, NO_LEDGER, lambda rule: self.levels.get(rule, "normative"))
        return ran[0], result


def _finding(variant: Variant, outcome: Outcome) -> Finding:
    return Finding(variant.name, outcome.rule, outcome.reason, outcome.evidence[0].splitlines()[0] if outcome.evidence else "")


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@dataclass(frozen=True)
class NewDifference:
    kind: Kind
    scenario: dict[str, Any]  # shrunk
    judged: Judged


@dataclass
class SearchReport:
    examples: int = 0  # distinct generated scenarios tried
    differing: int = 0  # of those, how many showed any finding
    known: Counter[Kind] = field(default_factory=Counter)  # generated scenarios showing each explained kind
    known_paths: Counter[tuple[Kind, str]] = field(default_factory=Counter)  # ... per differing path (golden kinds)
    noted: frozenset[str] = frozenset()  # paths the expectations' notes mention
    new_seen: Counter[Kind] = field(default_factory=Counter)  # ... each unexplained kind
    against: Counter[Kind] = field(default_factory=Counter)  # ... each kind failing on the expected port too
    against_example: dict[Kind, str] = field(default_factory=dict)  # one finding of each such kind, rendered
    new: list[NewDifference] = field(default_factory=list)

    def render(self, port: str, against: str) -> list[str]:
        lines = [f"differential: {self.examples} generated scenarios tried on {port} against {against}; "
                 f"{self.differing} showed a difference"]
        lines.append(f"skipped as known ({sum(self.known.values())}):" if self.known else "skipped as known: none")
        for (rule, reason), count in sorted(self.known.items()):
            lines.append(f"  {rule} ({reason}): {count}")
            paths = sorted(((n, w) for (k, w), n in self.known_paths.items() if k == (rule, reason)), reverse=True)
            noted = [(n, w) for n, w in paths if w in self.noted]
            lines += [f"      differs at {where}: {n}" for n, where in noted[:MAX_PATHS]]
            if len(noted) > MAX_PATHS:
                lines.append(f"      … and {len(noted) - MAX_PATHS} more paths the notes mention")
            # the coarse definition skips these too: each is worth a look
            lines += [f"      differs at {where}: {n}  (no note of the file mentions this path)"
                      for n, where in paths if where not in self.noted]
        if self.against:
            lines.append(f"failing on {against} too (not {port}'s difference; a harness or reference matter):")
            for kind, count in sorted(self.against.items()):
                lines += [f"  {kind[0]} ({kind[1]}): {count}", f"      e.g. {self.against_example.get(kind, '')}"]
        if not self.new:
            lines.append("new differences: none")
        for item in self.new:
            rule, reason = item.kind
            lines.append(f"new difference: {rule} ({reason}), in {self.new_seen[item.kind]} generated scenario(s)")
            lines += [f"  {f.render()}" for f in item.judged.port if f.kind == item.kind][:3]
        return lines


def search(judge: Judge, features: Features, known: Known, *, examples: int, shrink_budget: int = 200,
           progress: Callable[[str], None] = lambda _line: None) -> SearchReport:
    """Try ``examples`` generated scenarios; shrink one per unexplained kind (see the module
    docstring). ``shrink_budget`` bounds the port runs one shrink may spend."""
    hunt = _Hunt(judge, known, shrink_budget, progress)
    while True:
        try:
            shrunk = find(scenarios(features, judged=True), hunt.interesting, settings=_settings(examples))
        except NoSuchExample:
            return hunt.report
        kind = hunt.found(shrunk)
        progress(f"differential: new difference {kind[0]} ({kind[1]}) shrunk; searching on")


@dataclass
class _Hunt:
    """One search's state across hypothesis rounds: each round generates until a scenario
    shows a kind not yet reported, then shrinks it keeping that kind (``target``)."""

    judge: Judge
    known: Known
    shrink_budget: int
    progress: Callable[[str], None]
    report: SearchReport = field(default_factory=SearchReport)
    cache: dict[str, Judged] = field(default_factory=dict)
    tried: set[str] = field(default_factory=set)
    target: Kind | None = None
    shrink_runs: int = 0

    def __post_init__(self) -> None:
        self.report.noted = self.known.noted

    def interesting(self, scenario: dict[str, Any]) -> bool:
        key = json.dumps(scenario, sort_keys=True)
        if self.target is not None:  # shrinking: keep the same kind, within the budget
            if key not in self.cache:
                if self.shrink_runs >= self.shrink_budget:
                    return False
                self.shrink_runs += 1
            return self.target in {f.kind for f in self._judged(key, scenario).port}
        result = self._judged(key, scenario)
        if key not in self.tried:
            self._tally(key, result)
        reported = {item.kind for item in self.report.new}
        new = sorted({f.kind for f in result.port if not self.known.explains(f)} - reported)
        if new:
            self.target = new[0]
        return bool(new)

    def found(self, shrunk: dict[str, Any]) -> Kind:
        assert self.target is not None, "hypothesis returned an example no call found interesting"
        kind = self.target
        self.report.new.append(NewDifference(kind, shrunk, self._judged(json.dumps(shrunk, sort_keys=True), shrunk)))
        self.target, self.shrink_runs = None, 0
        return kind

    def _judged(self, key: str, scenario: dict[str, Any]) -> Judged:
        if key not in self.cache:
            self.cache[key] = self.judge.findings(scenario)
        return self.cache[key]

    def _tally(self, key: str, result: Judged) -> None:
        report = self.report
        self.tried.add(key)
        report.examples += 1
        report.differing += bool(result.port)
        for kind, finding in {f.kind: f for f in result.port}.items():
            (report.known if self.known.explains(finding) else report.new_seen)[kind] += 1
        for kind, where in {(f.kind, p) for f in result.port if self.known.explains(f) for p in f.paths}:
            report.known_paths[kind, where] += 1
        for kind, finding in {f.kind: f for f in result.against}.items():
            report.against[kind] += 1
            report.against_example.setdefault(kind, finding.render())
        if report.examples % 25 == 0:
            self.progress(f"differential: {report.examples} tried, {sum(report.new_seen.values())} new-kind sightings")


def _settings(examples: int) -> settings:
    return settings(search_settings(examples), phases=[Phase.generate, Phase.shrink])


def run_known(args: Any, expected: ShimSession, actual: ShimSession, features: Features,
              provider: FakeProvider, label: str) -> int:
    """``python -m toolnexus_conformance.differential --expectations=FILE``: search past the known, write
    each new difference (shrunk) with its goldens into ``--out``, print the tally. 0 when
    nothing new was found, 1 otherwise."""
    from toolnexus_conformance.differential.finds import pytest_command, write_find
    from toolnexus_conformance.verdict.expectations import load

    expectations = load(args.expectations)
    if args.port:
        expectations.check_port(args.port)
    judge = Judge(expected, actual, provider)
    report = search(judge, features, Known.from_expectations(expectations), examples=args.examples,
                    shrink_budget=args.shrink_budget, progress=lambda line: print(line, flush=True))
    for line in report.render(label, args.against):
        print(line)
    port_args = [f"--port={args.port}"] if args.port else [f"--port-cmd={args.port_cmd}"]
    port_args += [f"--port-src={args.port_src}"] if args.port_src else []
    for item in report.new:
        rule, reason = item.kind
        path = write_find(item.scenario, port=label, against=args.against, rule=rule, reason=reason,
                          expected=expected, provider=provider, out=args.out)
        print(f"  shrunk scenario: {path}")
        print(f"  judge it: {pytest_command(path, port_args)}")
    return 1 if report.new else 0
