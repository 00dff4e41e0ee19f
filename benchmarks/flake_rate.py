"""Flake rate of the wait-sensitive scenarios: run them N times against one port, optionally
on a machine kept busy on purpose, and count the variants whose verdict was not the same in
every run.

    python benchmarks/flake_rate.py [--runs 20] [--port reference] [--load 4]
    python benchmarks/flake_rate.py --port=golang --port-src=../toolnexus --expectations=conformance/golang.toml

A scenario is wait-sensitive when a tool of it sleeps (``delayMs``) or its host holds waitFor
callbacks (``holdUntil``): its verdicts rest on one thing happening before another, or on
something not happening within a wait. Each run is a fresh ``pytest`` process over those
scenario files (``--scenario`` picks others); a variant's verdict is its pytest outcome plus
the (rule, reason) pairs the JSON conformance report lists as failing for it. A variant is
flaky when some run's verdict differs from its most common one. A script, not a test: it
prints figures (and exits 1 when it saw a flake, so a CI job can watch for one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "fixtures" / "scenarios"
RUN_TIMEOUT_S = 1800
# Spins until the benchmark is gone: one killed by a signal runs no ``finally`` and must not
# leave the machine loaded for whatever runs next. The pid is given, not read at start-up,
# because the benchmark may already be gone by the time the child's interpreter is up.
BUSY_LOOP = "import os\nwhile os.getppid() == {parent}:\n    for _ in range(200_000): pass"

Verdict = tuple[str, tuple[str, ...]]  # (pytest outcome, sorted "rule:reason" failures)


@dataclass(frozen=True)
class Run:
    wall_s: float
    returncode: int
    verdicts: dict[str, Verdict]  # variant ("scenario[variant]") -> verdict


def wait_sensitive(folder: Path = SCENARIOS) -> list[Path]:
    """Scenario files with a tool delay or a held waitFor (read as data, not by text search)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = [*(data.get("toolkit") or {}).get("tools", []), *(data.get("toolkit") or {}).get("register", [])]
        delayed = any(isinstance(t.get("behaviour"), dict) and t["behaviour"].get("delayMs") for t in tools)
        held = bool(((data.get("host") or {}).get("waitFor") or {}).get("holdUntil"))
        if delayed or held:
            found.append(path)
    return found


@contextmanager
def busy(processes: int) -> Iterator[None]:
    """Keep ``processes`` CPU-bound children running for the duration; end exactly those."""
    children = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP.format(parent=os.getpid())]) for _ in range(processes)]
    try:
        yield
    finally:
        for child in children:
            child.kill()
        for child in children:
            child.wait()


def run_once(files: Sequence[Path], port_args: Sequence[str], work: Path, index: int) -> Run:
    junit, report = work / f"junit-{index}.xml", work / f"report-{index}.json"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            *map(str, files), *port_args, f"--junitxml={junit}", f"--conformance-report={report}"]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    wall = time.monotonic() - started
    if not junit.exists():
        raise SystemExit(f"run {index} wrote no JUnit XML (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return Run(wall, done.returncode, verdicts(junit, report))


def verdicts(junit: Path, report: Path) -> dict[str, Verdict]:
    failing: dict[str, list[str]] = {}
    if report.exists():
        for key, failure in json.loads(report.read_text(encoding="utf-8")).get("failures", {}).items():
            variant, _, rule = key.partition("::")
            failing.setdefault(variant, []).append(f"{rule}:{failure.get('reason')}")
    found: dict[str, Verdict] = {}
    for case in ET.parse(junit).iter("testcase"):
        name = case.get("name", "?")
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = tag
        found[name] = (outcome, tuple(sorted(failing.get(name.split("::")[-1], []))))
    return found


def flaky(runs: Sequence[Run]) -> dict[str, Counter[Verdict]]:
    """Variants whose verdict was not the same in every run, with how often each was seen."""
    seen: dict[str, Counter[Verdict]] = {}
    for run in runs:
        for variant, verdict in run.verdicts.items():
            seen.setdefault(variant, Counter())[verdict] += 1
    return {variant: counts for variant, counts in seen.items() if len(counts) > 1 or sum(counts.values()) < len(runs)}


def load_average() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f}/{five:.2f} (1/5 min)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/flake_rate.py", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="how many pytest runs (default 20)")
    parser.add_argument("--port", default="reference", help="registry name of the port (default reference)")
    parser.add_argument("--port-src", help="a toolnexus checkout, for a port that builds from one")
    parser.add_argument("--expectations", help="the port's expectations file")
    parser.add_argument("--port-timeout", type=float, help="per-call timeout (the hold waits a share of it)")
    parser.add_argument("--load", type=int, default=0, metavar="N", help="keep N busy processes running meanwhile")
    parser.add_argument("--scenario", action="append", default=[], metavar="ID",
                        help="a scenario id to run instead of the wait-sensitive set (repeatable)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    files = [SCENARIOS / f"{sid}.json" for sid in args.scenario] or wait_sensitive()
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        parser.error(f"no such scenario file: {', '.join(missing)}")
    port_args = [f"--port={args.port}"]
    port_args += [f"--port-src={args.port_src}"] if args.port_src else []
    port_args += [f"--expectations={args.expectations}"] if args.expectations else []
    port_args += [f"--port-timeout={args.port_timeout:g}"] if args.port_timeout else []

    print(f"port {args.port}, {len(files)} scenario files: {', '.join(f.stem for f in files)}")
    print(f"{args.runs} runs, {args.load} busy processes; load before: {load_average()}")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="flake-rate-") as tmp, busy(args.load):
        for index in range(args.runs):
            run = run_once(files, port_args, Path(tmp), index)
            runs.append(run)
            print(f"  run {index + 1:>3}: {run.wall_s:6.2f} s, exit {run.returncode}, {len(run.verdicts)} variants, "
                  f"load {load_average()}", flush=True)

    unstable = flaky(runs)
    variants = len({v for run in runs for v in run.verdicts})
    walls = [r.wall_s for r in runs]
    print(f"variants: {variants}; flaky: {len(unstable)} ({100 * len(unstable) / max(variants, 1):.1f} %)")
    print(f"exit codes: {dict(Counter(r.returncode for r in runs))}")
    print(f"wall per run: min {min(walls):.2f} s, median {statistics.median(walls):.2f} s, max {max(walls):.2f} s; "
          f"load after: {load_average()}")
    for variant, counts in sorted(unstable.items()):
        shown = "; ".join(f"{n}x {outcome} {list(failures) or ''}".rstrip() for (outcome, failures), n in counts.most_common())
        print(f"  FLAKY {variant}: {shown}")
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main())
