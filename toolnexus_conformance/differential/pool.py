"""The differential search spread over worker processes, each with its own shim pairs.

This module owns the run loop behind ``python -m toolnexus_conformance.differential``: the example budget
is split over ``workers`` searches, each in its own process with its own ``pairs`` shim pairs
and fake provider, running its scenarios a few ahead of hypothesis on those pairs
(differential/ahead.py), each drawing from its own deterministic stream of generated scenarios (worker 0 the
derandomized stream a one-process search draws, worker ``i`` a stream seeded with ``i``).
A worker that finds a difference shrinks it where it found it, with hypothesis, on its own
shims. Which difference is reported does not depend on scheduling: the lowest-numbered worker
that finds one wins, so on a find every worker numbered higher stops at its next example (its
result could not win) while every worker numbered lower finishes its stream. The same
``--examples`` and ``--workers`` therefore always report the same scenario.

One worker runs in this process, with no pool at all: it reports exactly the scenario
:func:`toolnexus_conformance.differential.search.minimal_difference` reports, whatever the number of pairs.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from random import Random
from typing import Any

from toolnexus_conformance.differential.ahead import AheadSearch, PairRunner, Shims, Stopped
from toolnexus_conformance.differential.rules import Reach, load_checks
from toolnexus_conformance.differential.search import Features, scenarios, search_settings, shim_for
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.helpers.gc_tuning import fewer_collections
from toolnexus_conformance.shim.forked import warm_ports
from toolnexus_conformance.shim.ports import ResolvedPort

NOBODY = sys.maxsize  # the lowest worker that found a difference, before any did
STOP_GRACE_S = 15.0  # after Ctrl-C: the examples in hand (one per shim pair) may finish
DEFAULT_PAIRS = 2  # per worker: while one pair waits (round trips, tool delays) the other runs
AHEAD_PER_PAIR = 2  # scenarios drawn ahead per pair, so a pair never waits for the next draw


class LowestFinder:
    """Which worker found a difference first in worker order (NOBODY until one did).

    Backed by a shared integer in worker processes, by a plain attribute in-process."""

    def __init__(self, shared: Any = None) -> None:
        self._shared = shared
        self._value = NOBODY

    def get(self) -> int:
        return int(self._shared.value) if self._shared is not None else self._value

    def lower_to(self, worker: int) -> None:
        if self._shared is None:
            self._value = min(self._value, worker)
            return
        with self._shared.get_lock():
            if self._shared.value > worker:
                self._shared.value = worker


@dataclass(frozen=True)
class WorkerJob:
    """What one worker searches: the two ports, its share of examples, its stream."""

    expected: ResolvedPort
    under_test: ResolvedPort
    worker: int
    examples: int
    pairs: int = DEFAULT_PAIRS
    shrink_budget: int | None = None  # shrink candidates a find may run (None: as many as hypothesis tries)


@dataclass(frozen=True)
class WorkerOutcome:
    """What one worker reports back (picklable: it crosses the process boundary)."""

    worker: int
    tried: int  # generated scenarios run through both ports, shrink attempts included
    found: dict[str, Any] | None = None  # the minimal differing scenario
    failures: tuple[str, ...] = ()  # its rendered differences
    stopped: bool = False  # a lower-numbered worker found one first
    error: str | None = None  # one line: why this worker could not search
    rules: tuple[str, ...] = ()  # the rules the found scenario breaks
    reach: Reach = field(default_factory=Reach)  # the normative rules its generated scenarios exercised


@dataclass(frozen=True)
class SearchResult:
    """The outcome of a whole search."""

    workers: int
    tried: int
    seconds: float
    found: dict[str, Any] | None
    failures: tuple[str, ...]
    rules: tuple[str, ...] = ()  # the rules the found scenario breaks (its comparison's relation for an observable difference)
    reach: Reach = field(default_factory=Reach)  # summed over the workers

    @property
    def rate(self) -> float:
        return self.tried / self.seconds if self.seconds > 0 else 0.0


def default_workers() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def shares(examples: int, workers: int) -> list[int]:
    """``examples`` split over at most ``workers`` workers, none with an empty share."""
    count = max(1, min(workers, examples))
    return [examples // count + (1 if i < examples % count else 0) for i in range(count)]


def stream(worker: int) -> Random | None:
    """The worker's source of examples: None is hypothesis's derandomized default."""
    return None if worker == 0 else Random(worker)


def search(expected: ResolvedPort, under_test: ResolvedPort, *, examples: int, workers: int,
           pairs: int = DEFAULT_PAIRS, shrink_budget: int | None = None) -> SearchResult:
    """Search ``examples`` generated scenarios over ``workers`` processes of ``pairs`` shim
    pairs each for a difference.

    Raises HarnessError with the first worker's reason when a worker could not search."""
    started = time.perf_counter()
    with ExitStack() as zygotes:  # one per reference port, shared by every worker
        # The checks are imported here, once, while the zygotes boot: forked workers inherit
        # them instead of each importing them (pytest and syrupy among them) before its first run.
        expected, under_test = warm_ports([expected, under_test], zygotes, meanwhile=load_checks)
        jobs = [WorkerJob(expected, under_test, i, n, pairs, shrink_budget) for i, n in enumerate(shares(examples, workers))]
        outcomes = [run_worker(jobs[0], LowestFinder())] if len(jobs) == 1 else _in_processes(jobs)
    seconds = time.perf_counter() - started
    errors = [o for o in outcomes if o.error is not None]
    if errors:
        first = min(errors, key=lambda o: o.worker)
        raise HarnessError(f"worker {first.worker}: {first.error}")
    winner = next((o for o in sorted(outcomes, key=lambda o: o.worker) if o.found is not None), None)
    return SearchResult(
        workers=len(jobs), tried=sum(o.tried for o in outcomes), seconds=seconds,
        found=winner.found if winner else None, failures=winner.failures if winner else (),
        rules=winner.rules if winner else (), reach=sum((o.reach for o in outcomes), Reach()),
    )


def _in_processes(jobs: list[WorkerJob]) -> list[WorkerOutcome]:
    """Each job in its own process; every outcome, including a worker that died."""
    context = _context()
    shared = context.Value("q", NOBODY)
    running: dict[int, tuple[WorkerJob, Any, Connection]] = {}
    outcomes: list[WorkerOutcome] = []
    try:
        for job in jobs:
            reader, writer = context.Pipe(duplex=False)
            process = context.Process(target=_worker_main, args=(job, shared, writer),
                                      name=f"differential-worker-{job.worker}", daemon=True)
            process.start()
            writer.close()  # ours: so a worker that dies reads as EOF, and the next fork does not inherit it
            running[job.worker] = (job, process, reader)
        while running:
            ready = set(wait([r for _, _, r in running.values()] + [p.sentinel for _, p, _ in running.values()]))
            for worker, (job, process, reader) in list(running.items()):
                if reader in ready or process.sentinel in ready:
                    outcomes.append(_receive(job, process, reader))
                    del running[worker]
    except KeyboardInterrupt:
        shared.value = -1  # every worker is "higher" than -1: each stops before its next example
        raise
    finally:
        for _, process, reader in running.values():  # only after an interrupt or an error here
            process.join(STOP_GRACE_S)
            if process.is_alive():
                process.terminate()
                process.join()
            reader.close()
    return outcomes


def _receive(job: WorkerJob, process: Any, reader: Connection) -> WorkerOutcome:
    try:
        outcome: WorkerOutcome = reader.recv()
    except (EOFError, OSError):
        process.join()
        return WorkerOutcome(job.worker, 0, error=f"the worker process died (exit status {process.exitcode}) "
                                                  "without reporting; killed, or out of memory?")
    finally:
        reader.close()
    process.join()
    return outcome


def _context() -> Any:
    # fork is cheap (no re-import of hypothesis and the harness per worker) but copies only
    # the calling thread: use it only while this process has no other thread whose locks
    # the copy could inherit held.
    if sys.platform == "linux" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _worker_main(job: WorkerJob, shared: Any, writer: Connection) -> None:
    # Ctrl-C is the parent's to handle: it tells the workers to stop through ``shared``, so
    # each closes its shims after the example in hand instead of dying in the middle of it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        writer.send(run_worker(job, LowestFinder(shared)))
    finally:
        writer.close()


def run_worker(job: WorkerJob, finder: LowestFinder) -> WorkerOutcome:
    """One worker's search on its own shim pairs and fake provider; raises only KeyboardInterrupt."""
    ahead: AheadSearch | None = None
    try:
        with ExitStack() as stack:
            # Zygotes first, so they stop after the shims they forked have closed. A port
            # search() warmed already is passed through as it is.
            warm_expected, warm_under_test = warm_ports([job.expected, job.under_test], stack)
            expected = [shim_for(warm_expected, stack) for _ in range(job.pairs)]
            under_test = [shim_for(warm_under_test, stack) for _ in range(job.pairs)]
            features = Features.shared_by(under_test[0], expected[0])
            provider = FakeProvider().start()
            stack.callback(provider.stop)
            runner = PairRunner(Shims(expected), Shims(under_test), provider, job.pairs)
            stack.callback(runner.close)  # before the shims close: the runs in hand end first
            ahead = AheadSearch(runner, scenarios(features), search_settings(job.examples), lambda: stream(job.worker),
                                depth=AHEAD_PER_PAIR * job.pairs, stop=lambda: finder.get() < job.worker,
                                differs=lambda: finder.lower_to(job.worker), shrink_budget=job.shrink_budget)
            with fewer_collections():
                outcome = ahead.run()
            return WorkerOutcome(job.worker, outcome.tried, outcome.found, outcome.failures, rules=outcome.rules,
                                 reach=outcome.reach)
    except Stopped:
        return WorkerOutcome(job.worker, ahead.tried if ahead else 0, stopped=True)
    except HarnessError as exc:
        return WorkerOutcome(job.worker, ahead.tried if ahead else 0, error=str(exc).splitlines()[0])
    except Exception as exc:  # a bug, not the ports': reported in one line, not as a traceback
        return WorkerOutcome(job.worker, ahead.tried if ahead else 0, error=f"internal error {type(exc).__name__}: {exc}")
