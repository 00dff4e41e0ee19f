"""Generated scenarios per second of the differential search, on 1 worker and on N.

    python benchmarks/differential_throughput.py [--examples 200] [--workers N] [--pairs P] [--port reference-norelay] [--against reference]

A script, not a test: it prints figures. Each line is one whole search as
``python -m toolnexus_conformance.differential`` runs it (shim start-up included): wall time, scenarios/s,
the CPU time every process spent (this one, the workers and every shim, their start-up included;
with one worker, split into the worker's own and the shims'), and what that CPU
cost per scenario allows on this machine's cores when nothing else runs — the figure to
compare on a loaded machine, where wall time mostly measures the other load.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus_conformance.differential.pool import DEFAULT_PAIRS, SearchResult, default_workers, search  # noqa: E402
from toolnexus_conformance.shim.ports import resolve  # noqa: E402


def _cpu_seconds() -> tuple[float, float]:
    """CPU time of this process, and of every child it has reaped (workers, shims, the
    shims' zygotes and what they reaped)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _line(result: SearchResult, own: float, children: float, cores: int) -> str:
    cpu = own + children
    per = cpu / max(result.tried, 1)
    # A worker's shims are processes of their own, so even one worker's search spreads over
    # the cores; the ceiling is the CPU bound of all of them (the worker's own share, one
    # interpreter, can cap one worker below it).
    usable = cores
    ceiling = usable / per if per > 0 else 0.0
    verdict = "difference found" if result.found is not None else "no difference"
    # One worker searches in this process: its own share and its shims' can be told apart.
    split = (f" (worker {1000 * own / max(result.tried, 1):4.1f} + shims {1000 * children / max(result.tried, 1):4.1f})"
             if result.workers == 1 else "")
    return (f"{result.workers} worker{'s' if result.workers > 1 else ' '}: {result.tried} scenarios in "
            f"{result.seconds:5.1f} s = {result.rate:6.1f} scenarios/s | CPU {cpu:5.1f} s, "
            f"{1000 * per:5.1f} ms/scenario{split}, quiet-machine ceiling on {usable} core{'s' if usable > 1 else ' '} ~{ceiling:5.1f}/s | {verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--workers", type=int, default=default_workers(), help="N (default: the cores)")
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS, help="shim pairs per worker (default: %(default)s)")
    parser.add_argument("--port", default="reference-norelay")
    parser.add_argument("--against", default="reference")
    args = parser.parse_args()
    cores = default_workers()
    under_test, expected = resolve(args.port, None, None, None), resolve(args.against, None, None, None)
    print(f"differential {args.port} against {args.against}, {args.examples} examples, {args.pairs} shim pairs per worker, {cores} cores, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for workers in sorted({1, args.workers}):
        own, children = _cpu_seconds()
        result = search(expected, under_test, examples=args.examples, workers=workers, pairs=args.pairs)
        own_after, children_after = _cpu_seconds()
        print(_line(result, own_after - own, children_after - children, cores), flush=True)
    # ru_maxrss is in KiB on Linux: the largest this process (the 1-worker search) and any
    # one reaped child (a worker, a shim) ever held
    own_peak, child_peak = (resource.getrusage(who).ru_maxrss // 1024 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(f"peak memory: this process {own_peak} MB, largest child {child_peak} MB")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
