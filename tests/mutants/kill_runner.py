"""Runs the conformance suite against one mutant shim and reads which rules killed it.

A run is ``python -m pytest --port-cmd "<python> tests/mutants/mutant_shim.py NAME"
--rule=R ... -x`` in a subprocess from the repository root. ``-x`` stops at the first
failing variant, which names every selected rule it broke; a rule missing from that
output gets a second run of its own, so a mutant needs one run in the common case.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.spawn import with_spawn_retry

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 300
# "[rule.id] (normative, divergence)" — the head line items.py writes per failing rule.
HEAD = re.compile(r"^\[(?P<rule>[a-z0-9.-]+)\] \((?P<level>normative|advisory), (?P<reason>[a-z-]+)\)", re.M)
UNTRUSTED_REASONS = {"transport", "capability"}  # a crash or a missing capability proves nothing


@dataclass
class KillRun:
    rules: tuple[str, ...]
    returncode: int
    output: str
    seconds: float

    def heads(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for match in HEAD.finditer(self.output):
            found.setdefault(match["rule"], set()).add(match["reason"])
        return found


@dataclass
class KillReport:
    mutant: str
    runs: list[KillRun] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)

    def reasons(self, rule: str) -> set[str]:
        return set().union(*(r.heads().get(rule, set()) for r in self.runs)) if self.runs else set()

    def killed_by(self, rule: str) -> bool:
        return bool(self.reasons(rule) - UNTRUSTED_REASONS)

    def run_for(self, rule: str) -> KillRun | None:
        return next((r for r in reversed(self.runs) if rule in r.rules), None)


def command(mutant: str, rules: tuple[str, ...], *, python: str = sys.executable) -> list[str]:
    shim = f"{shlex.quote(python)} tests/mutants/mutant_shim.py {mutant}"
    # hypothesis and xdist are not needed by a conformance run and cost half its start-up.
    argv = [python, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:xdist",
            "-q", "-x", "--port-cmd", shim, "--port-timeout", "20"]
    return argv + [f"--rule={rule}" for rule in rules]


def run_once(mutant: str, rules: tuple[str, ...]) -> KillRun:
    started = time.monotonic()
    try:
        done = with_spawn_retry(lambda: subprocess.run(
            command(mutant, rules), cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_S))
        returncode, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        returncode, output = -1, f"timed out after {RUN_TIMEOUT_S}s\n{exc.stdout or ''}"
    return KillRun(rules, returncode, output, time.monotonic() - started)


def kill(mutant: str, rules: tuple[str, ...]) -> KillReport:
    report = KillReport(mutant)
    report.runs.append(run_once(mutant, rules))
    missing = [r for r in rules if not report.killed_by(r)]
    if missing and len(rules) > 1:
        for rule in missing:
            report.runs.append(run_once(mutant, (rule,)))
    return report
