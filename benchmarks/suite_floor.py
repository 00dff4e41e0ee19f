"""The conformance suite's wall time against its floor, and shim against in-process
throughput, in one run (a script, not a test: it prints figures and asserts none).

    python benchmarks/suite_floor.py [--rounds 1] [--only PREFIX] [--skip-suite]

1. The floor: one shim round trip (``toolkit.describe`` on an empty toolkit, through the
   reference shim's pipes) and one loopback HTTP request to the fake provider, each the
   median of many. ``variants x round trip`` is the issue's floor; the fuller floor adds,
   per variant, every shim call and provider request its golden records at those latencies.
2. ``python -m pytest --port=reference`` (serial) as a subprocess: wall time, and CPU time
   (user+sys of pytest and every shim it reaped), with the machine's load before and after.
3. Variants per second through the reference shim and in-process (scenario_throughput.py).

``--only`` narrows steps 2 and 3 to the scenarios whose id starts with PREFIX (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fake_provider_latency  # noqa: E402
import scenario_throughput  # noqa: E402

from toolnexus_conformance.fake_provider import FakeProvider  # noqa: E402
from toolnexus_conformance.helpers.paths import golden_dir, scenarios_dir  # noqa: E402
from toolnexus_conformance.shim.ports import resolve  # noqa: E402
from toolnexus_conformance.shim.session import ShimSession  # noqa: E402

SUITE = [sys.executable, "-m", "pytest", "--port=reference", "-q", "-p", "no:cacheprovider"]


def shim_round_trip(calls: int) -> float:
    """Median seconds of one JSON-RPC call through the reference shim's stdio."""
    session = ShimSession(resolve("reference", None, None, None).argv)
    try:
        session.ensure_alive()
        timings = []
        for _ in range(calls):
            started = time.perf_counter()
            session.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=30)
            timings.append(time.perf_counter() - started)
    finally:
        session.close()
    return statistics.median(timings)


def http_round_trip(requests: int) -> float:
    """Median seconds of one keep-alive JSON request to the fake provider."""
    return statistics.median(fake_provider_latency.measure(True, requests, False))


def per_variant_work(only: str | None) -> tuple[float, float]:
    """Mean shim calls and provider requests per variant, from the goldens: one describe,
    one client.run per phase, each host callback (waitFor, store get/save, hook), and each
    request the provider answered."""
    calls, requests, count = 0, 0, 0
    for path in sorted(golden_dir().glob("*/*.json")):
        if only and not path.parent.name.startswith(only):
            continue
        phases = json.loads(path.read_text(encoding="utf-8"))["observables"]["phases"]
        calls += 1 + sum(
            1 + len(p["waitFor"]) + len(p["gets"]) + len(p["saves"]) + len(p["hooks"]) for p in phases
        )
        requests += sum(len(p["requests"]) for p in phases)
        count += 1
    return (calls / count, requests / count) if count else (0.0, 0.0)


def run_suite(only: str | None) -> tuple[int, float, float, str]:
    """(variants passed, wall s, CPU s, pytest's last line) of a serial reference run."""
    args = [str(p) for p in sorted(scenarios_dir().glob(f"{only}*.json"))] if only else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([*SUITE, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-300:]
    if done.returncode != 0:
        raise SystemExit(f"the reference suite failed (exit {done.returncode}): {last}")
    passed = re.search(r"(\d+) passed", last)
    return (int(passed.group(1)) if passed else 0), wall, cpu, last


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="throughput rounds over the variants")
    parser.add_argument("--only", help="only scenarios whose id starts with this (a smoke run)")
    parser.add_argument("--skip-suite", action="store_true", help="measure the floor and throughput only")
    parser.add_argument("--calls", type=int, default=300, help="round trips measured for each floor")
    args = parser.parse_args()

    print(f"floor ({load()})")
    rtt = shim_round_trip(args.calls)
    http = http_round_trip(args.calls)
    calls, requests = per_variant_work(args.only)
    per_variant = calls * rtt + requests * http
    print(f"  shim round trip (toolkit.describe, median)   {rtt * 1000:7.3f} ms")
    print(f"  loopback HTTP request (fake provider, median) {http * 1000:7.3f} ms")
    print(f"  per variant: {calls:.1f} shim calls + {requests:.1f} provider requests = {per_variant * 1000:.2f} ms")

    if not args.skip_suite:
        print(f"suite: {' '.join(SUITE[1:])}{' (--only ' + args.only + ')' if args.only else ''}")
        print(f"  before: {load()}")
        variants, wall, cpu, last = run_suite(args.only)
        print(f"  after:  {load()}")
        print(f"  {last}")
        print(f"  wall {wall:6.2f} s   CPU (pytest + shims) {cpu:6.2f} s   {variants} variants")
        print(f"  floor, variants x round trip:       {variants * rtt:6.3f} s  (wall / floor = {wall / (variants * rtt):.0f}x)")
        print(f"  floor, every call and request:      {variants * per_variant:6.3f} s  "
              f"(wall / floor = {wall / (variants * per_variant):.1f}x)")

    print(f"throughput ({load()})")
    selected = [v for v in scenario_throughput.variants() if not args.only or v.scenario.id.startswith(args.only)]
    port = resolve("reference", None, None, None)
    with FakeProvider() as provider:
        session = ShimSession(port.argv)
        session.ensure_alive()
        try:
            shim_rate = scenario_throughput.measure("  reference shim (subprocess)", session, provider, selected, args.rounds)
        finally:
            session.close()
        direct_rate = scenario_throughput.measure("  in-process", scenario_throughput.InProcessShim(), provider, selected, args.rounds)
    print(f"  in-process / shim ratio: {direct_rate / shim_rate:.2f}x")


if __name__ == "__main__":
    main()
