"""Our own test command's wall and CPU time, with the machine's load, and where the time
goes (a script, not a test: it prints figures and asserts none).

    python benchmarks/own_suite.py [--gates] [--top 25] [--workers auto] [PATH ...]

Runs the README's test command (``python -m pytest -n auto tests fixtures/scenarios
--port=reference``; ``--gates``: the gate command, ``python -m pytest -n auto tests/gates``;
PATHs: only those, for a smoke run) as a subprocess and prints: its summary line, wall time,
CPU time (user+sys of pytest and every process it reaped, the mutants' fork server included)
against what two cores give in that wall time, the 1-minute load before and after, the failed
tests, the skipped ones with their reasons, the test time summed per folder (what one core
spent in each; the mutants' kill pass runs in the background from the end of collection, so
its runs are in no test's time, only in the CPU figure, and tests beside it take longer), and
the slowest tests.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_COMMAND = ["-m", "pytest", "-n", "auto", "tests", "fixtures/scenarios", "--port=reference"]
GATE_COMMAND = ["-m", "pytest", "-n", "auto", "tests/gates"]


def folder_of(test: ET.Element) -> str:
    """tests/<folder> (or the module of a top-level test file), or the scenario suite."""
    parts = (test.get("classname") or "").split(".")
    if parts[0] != "tests":
        return "fixtures/scenarios (the reference suite)"
    return "/".join(parts[:2])


def skip_lines(tests: list[ET.Element]) -> list[str]:
    """One line per skipped test with its reason, so two runs' skip counts can be compared
    test by test."""
    lines = []
    for test in tests:
        skipped = test.find("skipped")
        if skipped is not None:
            reason = (skipped.get("message") or "").replace("\n", " ")[:160]
            lines.append(f"SKIPPED {test.get('classname')}::{test.get('name')}: {reason}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", action="store_true", help="time the gate command instead")
    parser.add_argument("--top", type=int, default=25, help="how many of the slowest tests to list")
    parser.add_argument("--workers", default="auto", help="xdist's -n (default auto, as the command; a smoke run may take 0: no worker processes)")
    parser.add_argument("paths", nargs="*", help="run only these test paths (a smoke run)")
    args = parser.parse_args()
    command = GATE_COMMAND if args.gates else TEST_COMMAND
    command = [*command[:3], args.workers, *command[4:]]
    if args.paths:
        command = [*command[:4], *args.paths, *(["--port=reference"] if not args.gates else [])]
    with tempfile.TemporaryDirectory(prefix="own-suite-") as folder:
        junit = Path(folder) / "junit.xml"
        argv = [sys.executable, *command, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
        print("command:", " ".join(["python", *command]))
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.monotonic()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.monotonic() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_after = os.getloadavg()[0]
        lines = done.stdout.strip().splitlines()
        print("summary:", lines[-1] if lines else "(no output)", f"(exit {done.returncode})")
        gates_line = [line for line in lines if "gates" in line and line.startswith("=")]
        if gates_line:
            print("gates line:", gates_line[0].strip("= "))
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"wall {wall:.1f} s; CPU {cpu:.1f} s user+sys ({cpu / (2 * wall):.0%} of two cores over that wall time)")
        print(f"load (1 min) before {load_before:.2f}, after {load_after:.2f}")
        if not junit.exists():
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        tests = list(ET.parse(junit).getroot().iter("testcase"))
    failed = [t for t in tests if t.find("failure") is not None or t.find("error") is not None]
    for test in failed:
        print(f"FAILED {test.get('classname')}::{test.get('name')}")
    for line in skip_lines(tests):
        print(line)
    per_folder: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for test in tests:
        per_folder[folder_of(test)] += float(test.get("time") or 0)
        counts[folder_of(test)] += 1
    print(f"\ntest time summed per folder ({len(tests)} tests, {sum(per_folder.values()):.1f} s):")
    for name, seconds in per_folder.most_common():
        print(f"  {seconds:8.1f} s  {counts[name]:5d} tests  {name}")
    print(f"\nslowest {args.top} tests:")
    slowest = sorted(tests, key=lambda t: -float(t.get("time") or 0))[: args.top]
    for test in slowest:
        print(f"  {float(test.get('time') or 0):8.2f} s  {test.get('classname')}::{test.get('name')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
