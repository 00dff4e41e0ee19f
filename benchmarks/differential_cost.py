"""Where one differential worker's CPU goes, by thread and by step.

    python benchmarks/differential_cost.py [--examples 400] [--port reference-norelay] [--against reference]

A script, not a test: it prints figures. It runs one worker's search in this process (as
``differential_throughput.py`` does for 1 worker, the checks loaded beforehand) and prints
the CPU a scenario cost in each kind of thread of the worker (``main``: hypothesis drawing
the scenarios; ``differential-scenario`` and ``differential-port``: running both ports and
judging; ``Thread``: the fake provider's connections; ``shim-*``: the shim transport) and in
the shims, then the judge with the comparison replayed on the scenarios' records alone, in
one thread, best of three (the steadiest figure on a machine whose speed moves: compare it
between two trees back to back).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus_conformance.differential import rules as differential_rules  # noqa: E402
from toolnexus_conformance.differential.pool import LowestFinder, WorkerJob, run_worker  # noqa: E402
from toolnexus_conformance.differential.search import variant_failures  # noqa: E402
from toolnexus_conformance.shim.ports import resolve  # noqa: E402

_cpu: collections.Counter[str] = collections.Counter()
_lock = threading.Lock()
_thread_run = threading.Thread.run


def _counted_run(self: threading.Thread) -> None:
    try:
        _thread_run(self)
    finally:
        kind = re.sub(r"[-_:]?\d+.*$", "", self.name) or self.name
        spent = time.thread_time()
        with _lock:
            _cpu[kind] += spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=400)
    parser.add_argument("--port", default="reference-norelay")
    parser.add_argument("--against", default="reference")
    args = parser.parse_args()
    differential_rules.load_checks()
    judged: list[tuple[Any, ...]] = []
    real_judge = differential_rules.RuleJudge.judge

    def capturing(self: differential_rules.RuleJudge, *given: Any) -> differential_rules.ScenarioVerdict:
        judged.append(given)
        return real_judge(self, *given)

    differential_rules.RuleJudge.judge = capturing  # type: ignore[method-assign]
    threading.Thread.run = _counted_run  # type: ignore[method-assign]
    job = WorkerJob(resolve(args.against, None, None, None), resolve(args.port, None, None, None), 0, args.examples)
    print(f"differential {args.port} against {args.against}, {args.examples} examples, 1 worker, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    own, children, started = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN), time.thread_time()
    outcome = run_worker(job, LowestFinder())
    _cpu["main"] = time.thread_time() - started
    own_after, children_after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    threading.Thread.run = _thread_run  # type: ignore[method-assign]
    differential_rules.RuleJudge.judge = real_judge  # type: ignore[method-assign]
    per = 1000 / max(outcome.tried, 1)
    worker = (own_after.ru_utime + own_after.ru_stime - own.ru_utime - own.ru_stime) * per
    shims = (children_after.ru_utime + children_after.ru_stime - children.ru_utime - children.ru_stime) * per
    print(f"{outcome.tried} scenarios: worker {worker:.2f} + shims {shims:.2f} ms of CPU a scenario")
    for kind, spent in _cpu.most_common():
        print(f"  {kind:24s} {spent * per:6.2f} ms")
    best = float("inf")
    for _ in range(3):
        judge, began = differential_rules.RuleJudge(), time.process_time()
        for variants, facts, expected, actual, _compare in judged:
            judge.judge(variants, facts, expected, actual, variant_failures)
        best = min(best, time.process_time() - began)
    print(f"judge and comparison, replayed on {len(judged)} scenarios' records: {1000 * best / max(len(judged), 1):.3f} ms of CPU a scenario")
    return 0


if __name__ == "__main__":
    sys.exit(main())
