"""The fault-injection suite's tools: a conformance run in-process (pytester) against the
fault shim, its wall time, and a census of the processes a run left behind.

(A module of its own, not conftest.py: test modules of several folders import from here,
and ``conftest`` is one module name for all of them.)

Every shim the harness starts carries ``TOOLNEXUS_SHIM_INSTANCE=<harness pid>-<random>``
(see toolnexus_conformance/shim/process_tree.py), so "no process left behind" is checked by scanning /proc for
live processes carrying a token of *this* test process — other xdist workers' shims carry
their own pid and are not counted.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolnexus_conformance.shim import process_tree

REPO = Path(__file__).resolve().parents[2]
FAULT_SHIM = Path(__file__).with_name("fault_shim.py")
SCENARIO = REPO / "fixtures" / "scenarios" / "loop-plain-answer.json"
TARGET = "loop-plain-answer[openai-ask-uncalled-relay]"  # fourth of twelve: variants run before and after it; no other variant compares itself with it (toolnexus_conformance.scenario.relations)
VARIANTS = 12
# The inner run is the plugin itself: no xdist, no cache, and no pytest-timeout (its SIGALRM
# would replace the outer test's own).
INNER = ["-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:timeout", "-p", "no:hypothesispytest", "-q",
         "-W", "ignore::pytest.PytestConfigWarning"]  # the repo's `timeout` ini key, without its plugin


@dataclass
class Run:
    outcome: dict[str, int]
    text: str
    seconds: float

    def harness_tracebacks(self) -> list[str]:
        # Quoted shim stderr starts with "|"; any other traceback line is the harness's own.
        return [line for line in self.text.splitlines()
                if "Traceback (most recent call last)" in line and not line.lstrip().startswith("|")]


def fault_command(fault: str, pidfile: Path | None = None, target: str = TARGET) -> str:
    argv = [sys.executable, str(FAULT_SHIM), fault, target]
    return shlex.join(argv + (["--pidfile", str(pidfile)] if pidfile else []))


def run_conformance(pytester: pytest.Pytester, *args: str) -> Run:
    began = time.monotonic()
    result = pytester.runpytest_inprocess(*INNER, *args)
    seconds = time.monotonic() - began
    outcome = result.parseoutcomes()
    return Run({k: outcome.get(k, 0) for k in ("passed", "failed", "error")}, result.stdout.str() + result.stderr.str(),
               seconds)


def our_leftovers() -> list[str]:
    """Live processes started by a shim of this test process (and not ended with it)."""
    if not Path("/proc").is_dir():
        return []  # the tests that need the census skip themselves (needs_proc)
    prefix = f"{process_tree.TOKEN_VAR}={os.getpid()}-".encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or not alive(int(pid)):
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(entry.startswith(prefix) for entry in environ):
            found.append(f"{pid}: {cmdline}")
    return found


def alive(pid: int) -> bool:
    """Running or sleeping; a zombie (dead, waiting to be reaped by init) does not count."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] not in {"Z", "X"}


def pid_from(pidfile: Path) -> int:
    assert pidfile.exists() and pidfile.read_text().strip(), f"the fault shim never started its helper ({pidfile})"
    return int(pidfile.read_text())
