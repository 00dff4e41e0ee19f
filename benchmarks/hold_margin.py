"""How long a correct port keeps the host's ``holdUntil`` waiting: for every held phase of
the scenarios that hold waitFor callbacks, the time from the first parked callback to the
arrival that released the hold (``HoldRelease.waited_s``), against the hold timeout a
never-reached hold waits (a share of the per-call timeout, ``toolnexus_conformance.run.host``).

    python benchmarks/hold_margin.py [--port reference] [--rounds 3]
    python benchmarks/hold_margin.py --port=golang --port-src=../toolnexus

A script, not a test: it prints figures. A hold that timed out in a port that calls back
concurrently would be a flake of the never-reached-hold check; the margin is how far the
slowest release stayed below the timeout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus_conformance.fake_provider import FakeProvider  # noqa: E402
from toolnexus_conformance.helpers.errors import ShimCallError  # noqa: E402
from toolnexus_conformance.helpers.paths import scenarios_dir  # noqa: E402
from toolnexus_conformance.run.host import hold_timeout_for  # noqa: E402
from toolnexus_conformance.run.runner import run_variant  # noqa: E402
from toolnexus_conformance.scenario.model import load_scenario, scenario_files  # noqa: E402
from toolnexus_conformance.shim.ports import resolve  # noqa: E402
from toolnexus_conformance.shim.session import ShimSession  # noqa: E402


def held_scenarios() -> list[Path]:
    return [p for p in scenario_files(scenarios_dir())
            if ((load_scenario(p).data.get("host") or {}).get("waitFor") or {}).get("holdUntil")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/hold_margin.py", description=__doc__.splitlines()[0])
    parser.add_argument("--port", default="reference")
    parser.add_argument("--port-src", help="a toolnexus checkout, for a port that builds from one")
    parser.add_argument("--port-timeout", type=float, help="per-call timeout (default: the port's own)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every variant (default 3)")
    args = parser.parse_args(argv)
    port = resolve(args.port, None, args.port_src, args.port_timeout)
    released: list[tuple[float, str]] = []
    timed_out: list[str] = []
    unsupported: set[str] = set()
    with ShimSession(port.argv, env={**os.environ, **port.env} if port.env else None) as shim:
        handshake = shim.ensure_alive()
        provider = FakeProvider().start()
        try:
            for path in held_scenarios():
                for variant in load_scenario(path).variants():
                    if variant.uncalled_relay and not handshake.supports("relay"):
                        continue
                    name = f"{path.stem}[{variant.name}]"
                    for _ in range(args.rounds):
                        try:
                            phases = run_variant(variant, shim, provider, timeout=port.timeout).phases
                        except ShimCallError as exc:  # a capability the port does not declare
                            if not (exc.data or {}).get("capability"):
                                raise
                            unsupported.add(f"{name} ({exc.data['capability']})")
                            break
                        for phase in phases:
                            hold = phase.host.hold
                            if hold is not None and hold.timed_out:
                                timed_out.append(name)
                            elif hold is not None:
                                released.append((hold.waited_s, name))
        finally:
            provider.stop()
    limit = hold_timeout_for(port.timeout)
    load = "/".join(f"{x:.2f}" for x in os.getloadavg()[:2])
    print(f"port {args.port}: hold timeout {limit:g} s (per-call timeout {port.timeout:g} s); load {load} (1/5 min)")
    if released:
        waits = sorted(w for w, _ in released)
        slowest = max(released)
        print(f"released on arrival: {len(waits)} holds; median {1000 * statistics.median(waits):.1f} ms, "
              f"p95 {1000 * waits[int(0.95 * (len(waits) - 1))]:.1f} ms, max {1000 * slowest[0]:.1f} ms ({slowest[1]}); "
              f"margin {limit / max(slowest[0], 1e-9):.0f}x")
    print(f"timed out (a port calling back one at a time, or a flake): {len(timed_out)} {sorted(set(timed_out))}")
    if unsupported:
        print(f"not run (capability missing): {len(unsupported)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
