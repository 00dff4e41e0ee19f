"""Every figure of issue 9 in one run (a script, not a test: it prints figures and asserts none).

    python benchmarks/all_figures.py [--port-src PATH] [--quick]

Runs, one after the other so they do not load each other:

1. ``suite_floor.py`` — the serial reference suite's wall and CPU time against its floor
   (variants x measured shim round trip), and shim against in-process throughput;
2. with ``--port-src``, the golang and java suites (warm builds: each is run once to build,
   then timed);
3. ``differential_throughput.py`` — generated scenarios per second on 1 and 2 workers;
4. ``own_suite.py`` — our own test command's wall and CPU time.

Each step's own output is printed under a heading, then one table of wall times, the load
each was measured under and the machine's speed just before it (``machine_speed.py``: the CPU
time of a fixed pure-Python workload; on a shared machine it moves by a third from one minute
to the next). ``--quick`` narrows every step to a smoke run.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from machine_speed import probe  # noqa: E402


@dataclass
class Step:
    name: str
    argv: list[str]
    wall_s: float = 0.0
    cpu_s: float = 0.0
    load: str = ""
    probe_ms: float = 0.0
    code: int = 0


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def run(step: Step) -> Step:
    print(f"\n=== {step.name}: {' '.join(step.argv)}", flush=True)
    step.load = _load()
    step.probe_ms = probe()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    step.code = subprocess.run(step.argv, cwd=ROOT, check=False).returncode
    step.wall_s = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    step.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return step


def port_suite(port: str, src: str, quick: bool) -> list[str]:
    argv = [sys.executable, "-m", "pytest", f"--port={port}", f"--port-src={src}",
            f"--expectations=conformance/{port}.toml", "-q", "-p", "no:randomly"]
    return argv + (["fixtures/scenarios/loop-tool-loop.json"] if quick else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-src", help="a toolnexus checkout: also time the golang and java suites")
    parser.add_argument("--quick", action="store_true", help="smoke-sized steps (checks the script runs)")
    args = parser.parse_args()
    python = sys.executable
    steps: list[Step] = []
    floor = [python, str(HERE / "suite_floor.py")] + (["--only", "susp-waitfor-raises", "--calls", "5"] if args.quick else [])
    steps.append(run(Step("reference suite against its floor", floor)))
    if args.port_src:
        for port in ("golang", "java"):
            subprocess.run(port_suite(port, args.port_src, True), cwd=ROOT, check=False, capture_output=True)
            steps.append(run(Step(f"{port} suite, warm build", port_suite(port, args.port_src, args.quick))))
    # The quick step is test_differential_pool's smoke run to the letter (4 examples, 1 and 2
    # workers), whatever the cores, so that test can read it instead of running it again.
    examples = ["--examples", "4", "--workers", "2"] if args.quick else ["--examples", "1000"]
    steps.append(run(Step("differential throughput", [python, str(HERE / "differential_throughput.py"), *examples])))
    # The smoke run of the own-suite step keeps xdist with one worker: each worker is an
    # interpreter collecting the suite's conftest (~1.1 s of CPU), and the step's figures are
    # not read.
    own = [python, str(HERE / "own_suite.py")] + (["--top", "3", "--workers", "0", "tests/test_flake_rate.py"] if args.quick else [])
    steps.append(run(Step("own test command", own)))
    print("\n=== summary (wall and CPU of each step's whole process tree; the speed probe and load when it started)")
    for step in steps:
        status = "ok" if step.code == 0 else f"exit {step.code}"
        print(f"{step.name:<36} wall {step.wall_s:7.1f} s  CPU {step.cpu_s:7.1f} s  probe {step.probe_ms:4.0f} ms  "
              f"load {step.load}  {status}")
    return max((step.code for step in steps), default=0)


if __name__ == "__main__":
    sys.exit(main())
