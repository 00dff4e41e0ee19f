"""One worker's differential search, run ahead of hypothesis on several shim pairs at once.

Hypothesis draws scenario k+1 only after the condition answered for scenario k, so a search
that runs each scenario the moment hypothesis asks keeps one shim busy at a time and waits
out every round trip and tool delay. Almost every answer is "no difference", and a
derandomized (or seeded) search that only ever hears "no" draws a stream fixed by its seed.
So the search here answers "no" at once, and runs the scenario in the background on a free
shim pair, both ports at the same time (:class:`PairRunner`), a few scenarios ahead.

When a run differs, the generation stops and the search is replayed from its start with
every answer known (a scenario already run is looked up, not rerun): hypothesis meets the
first differing scenario of the stream exactly where a one-at-a-time search meets it, and
shrinks it, each shrink candidate run on both ports at once. The result is therefore the
scenario :func:`toolnexus_conformance.differential.search.minimal_difference` reports for the same budget and
stream; only the count of scenarios run differs (a few run ahead of the find).
"""

from __future__ import annotations

import hashlib
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from random import Random
from typing import Any

from hypothesis import find, settings
from hypothesis.errors import NoSuchExample
from hypothesis.strategies import SearchStrategy

from toolnexus_conformance.differential.contract import needs_declarations
from toolnexus_conformance.differential.rules import Reach, RuleJudge, ScenarioVerdict
from toolnexus_conformance.differential.search import TIMEOUT_S, as_scenario, canonical, variant_failures
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.run.facts import Facts, facts_for
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.shim.session import ShimSession

Scenario = dict[str, Any]


class Stopped(BaseException):
    """Raised inside a worker's search once it must stop (a lower-numbered worker found a
    difference). A BaseException: hypothesis treats an Exception from the condition as a
    failure to shrink, while this must end the search at once."""


class _Differs(BaseException):
    """Ends the run-ahead generation: a scenario already run showed a difference."""


class _BudgetSpent(BaseException):
    """Ends a shrink whose budget of candidates is spent: the smallest find so far stands."""


class Shims:
    """One port's shims, each lent to one run at a time."""

    def __init__(self, sessions: Sequence[ShimSession]) -> None:
        self._free: queue.SimpleQueue[ShimSession] = queue.SimpleQueue()
        for session in sessions:
            self._free.put(session)

    def run(self, variants: list[Variant], facts: list[Facts], provider: FakeProvider, *,
            declarations: bool = False) -> list[RunRecord]:
        shim = self._free.get()
        try:
            # The declarations are no observable: asked for only where the scenario's toolkit
            # construction is what it draws (the decl.* and guard rules read them).
            return [run_variant(variant, shim, provider, timeout=TIMEOUT_S, facts=f, declarations=declarations)
                    for variant, f in zip(variants, facts, strict=True)]
        finally:
            self._free.put(shim)


class PairRunner:
    """Runs a scenario's variants on both ports at the same time, ``pairs`` scenarios at once."""

    def __init__(self, expected: Shims, under_test: Shims, provider: FakeProvider, pairs: int,
                 judge: RuleJudge | None = None) -> None:
        self._expected, self._under_test, self._provider = expected, under_test, provider
        self.judge = judge if judge is not None else RuleJudge()
        self._scenarios = ThreadPoolExecutor(pairs, thread_name_prefix="differential-scenario")
        self._ports = ThreadPoolExecutor(pairs, thread_name_prefix="differential-port")

    def submit(self, scenario: Scenario, canonical_json: bytes | None = None) -> Future[ScenarioVerdict]:
        return self._scenarios.submit(self.differ, scenario, canonical_json)

    def differ(self, scenario: Scenario, canonical_json: bytes | None = None) -> ScenarioVerdict:
        """What ``scenario`` shows (the expected port's runs are the golden): the observable
        differences and the rules the port breaks (differential/rules.py);
        ``canonical_json``: its canonical JSON, when the caller made it already."""
        variants = [v for v in as_scenario(scenario, canonical_json).variants() if not v.uncalled_relay]
        facts = [facts_for(v) for v in variants]  # the same for both ports' runs: derived once
        declarations = needs_declarations(scenario)
        verdict = self._judged(variants, facts, declarations)
        if verdict.findings:  # a rule finding stands only if a second run shows it too
            verdict = verdict.confirmed_by(self._judged(variants, facts, declarations))
        return verdict

    def _judged(self, variants: list[Variant], facts: list[Facts], declarations: bool) -> ScenarioVerdict:
        actual = self._ports.submit(self._under_test.run, variants, facts, self._provider, declarations=declarations)
        try:
            expected = self._expected.run(variants, facts, self._provider, declarations=declarations)
        finally:
            got = actual.result()  # waited for even when ours failed: its shim goes back first
        return self.judge.judge(variants, facts, expected, got, variant_failures)

    def close(self) -> None:
        """Wait for the runs in hand (one scenario per pair at most); drop those not started."""
        self._scenarios.shutdown(wait=True, cancel_futures=True)
        self._ports.shutdown(wait=True, cancel_futures=True)


@dataclass
class Outcome:
    """What one search found, and how many scenarios it ran on both ports."""

    tried: int
    found: Scenario | None = None
    failures: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # the rules the found scenario breaks (differential/rules.py)
    reach: Reach = field(default_factory=Reach)  # over the scenarios generated, shrink candidates not counted


@dataclass
class AheadSearch:
    """A search that runs up to ``depth`` scenarios ahead of hypothesis (see the module docstring).

    ``stream`` makes the source of examples afresh (a replay must start from the same seed);
    ``stop`` says the search must end (it raises :class:`Stopped`); ``differs`` is told,
    once, when the first difference of the stream is known (every run before it ended);
    ``shrink_budget`` bounds the shrink candidates run: when a candidate past it would have to
    run, the shrink ends with the smallest differing scenario so far (a count, so the result
    still depends on the stream alone; 0 reports the first difference of the stream as drawn)."""

    runner: PairRunner
    strategy: SearchStrategy[Scenario]
    settings: settings
    stream: Callable[[], Random | None]
    depth: int
    stop: Callable[[], bool] = lambda: False
    differs: Callable[[], None] = lambda: None
    shrink_budget: int | None = None
    _jobs: dict[bytes, Future[ScenarioVerdict]] = field(default_factory=dict)  # by _key, in draw order
    _in_flight: set[Future[ScenarioVerdict]] = field(default_factory=set)
    _generated: int | None = None  # how many of _jobs the generation drew (the rest are shrink candidates)
    _smallest: Scenario | None = None  # the last differing scenario the shrink met: its smallest so far

    def run(self) -> Outcome:
        try:
            find(self.strategy, self._ahead, settings=self.settings, random=self.stream())
        except (NoSuchExample, _Differs):
            pass
        first = self._first_difference()
        self._generated = len(self._jobs)
        reach = Reach.of(job.result() for job in list(self._jobs.values())[: self._generated] if not job.cancelled())
        if first is None:
            return Outcome(self.tried, reach=reach)
        self.differs()
        try:
            found = find(self.strategy, self._replayed, settings=self.settings, random=self.stream())
        except _BudgetSpent:
            assert self._smallest is not None, "the budget is only checked once the replay met the difference"
            found = self._smallest
        verdict = self._answer(found)
        return Outcome(self.tried, found, verdict.failures, verdict.rules, reach)

    def _ahead(self, scenario: Scenario) -> bool:
        if self.stop():
            raise Stopped
        text = canonical(scenario)
        key = _key(text)
        if key not in self._jobs:
            job = self.runner.submit(scenario, text)
            self._jobs[key] = job
            self._in_flight.add(job)
        while len(self._in_flight) >= self.depth:
            wait(self._in_flight, return_when=FIRST_COMPLETED)
            self._settle()
        self._settle()
        return False

    def _settle(self) -> None:
        for job in [j for j in self._in_flight if j.done()]:
            self._in_flight.discard(job)
            if job.exception() is not None or job.result():
                raise _Differs  # an error too: whether it comes before any difference is decided below

    def _first_difference(self) -> bytes | None:
        """The first scenario in draw order that differs, once every run before it ended.
        A run that failed (a shim that crashed) before it raises its error here."""
        wait(list(self._jobs.values()))
        for key, job in self._jobs.items():
            error = job.exception()
            if error is not None:
                raise error
            if job.result():
                return key
        return None

    def _replayed(self, scenario: Scenario) -> bool:
        if self.stop():
            raise Stopped
        differs = bool(self._answer(scenario))
        if differs:  # hypothesis only calls a candidate interesting when it is smaller than the last
            self._smallest = scenario
        return differs

    def _answer(self, scenario: Scenario) -> ScenarioVerdict:
        text = canonical(scenario)
        key = _key(text)
        job = self._jobs.get(key)
        if job is None:  # a shrink candidate: run now, on both ports at once, within the budget
            if self.shrink_budget is not None and len(self._jobs) - (self._generated or 0) >= self.shrink_budget:
                raise _BudgetSpent
            job = self._jobs[key] = self.runner.submit(scenario, text)
        return job.result()

    @property
    def tried(self) -> int:
        """Scenarios run (or running) on both ports so far, shrink candidates included."""
        return sum(1 for job in self._jobs.values() if not job.cancelled())


def _key(canonical_json: bytes) -> bytes:
    """The identity of the scenario whose :func:`canonical` JSON this is, small: a long
    search holds one per scenario it tried."""
    return hashlib.blake2b(canonical_json, digest_size=16).digest()
