"""One fault per test, injected into one variant through the whole plugin (in-process).

Each run is the twelve variants of a small scenario against the reference shim with the
fault injected into the third. Every test asserts: the faulty variant fails with a message
naming the fault (never a harness traceback), the shim is restarted and the variants after
it pass, the run ends within its deadline, and no process a shim started is left.

Faults that must be noticed without waiting for the per-call timeout run with a long one
(``PATIENT``) and a budget far below it; faults that are timeouts run with a short one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from faultkit import (
    SCENARIO,
    TARGET,
    VARIANTS,
    alive,
    fault_command,
    our_leftovers,
    pid_from,
    run_conformance,
)

PATIENT = 30.0  # a per-call timeout the fault must not wait for
SHORT = 2.0  # a per-call timeout the fault does wait for
BUDGET = 20.0  # the whole twelve-variant run, on a loaded 2-core machine


@dataclass(frozen=True)
class Fault:
    says: str  # what the faulty variant's failure must say
    timeout: float = PATIENT
    fails: int = 1
    helper: bool = False  # the fault shim starts a helper process and writes its pid
    reason: str = "transport"  # the reason class the failure is filed under


FAULTS = {
    # a shim that dies or breaks the protocol
    "crash": Fault("shim exited with code 7 (during client.run)"),
    "exit": Fault("shim exited with code 0 (during client.run)"),
    "half-line": Fault("shim broke the protocol: line is not JSON"),
    "non-json": Fault("shim broke the protocol: line is not JSON"),
    "wrong-id": Fault("shim sent a response with an unknown id"),
    "invalid-utf8": Fault("line is not valid UTF-8 (invalid start byte"),
    "late-answer": Fault(f"shim did not answer client.run within {SHORT:g} s; sent $/cancel and killed it", SHORT),
    # all 10 000 are answered and the run goes on; the extra store reads are observables (§5),
    # so the variant fails its comparison with the same port's run without the uncalled relay
    # tool (relay.uncalled-inert), and only that variant
    "callbacks-10000": Fault("$.phases[0].gets[1]: golden <absent>, port \"fault-probe\"", reason="divergence"),
    # a shim that stops reading, holds its pipes, or floods the harness
    "stop-reading": Fault("shim stopped reading its stdin", SHORT),
    "exit-grandchild-holds-stdout": Fault("shim exited with code 7 (during client.run)", helper=True),
    "setsid-grandchild": Fault("", fails=0, helper=True),
    "unknown-host-method": Fault(
        "shim broke the protocol during client.run: unknown host method 'host.nosuch' (the host answers host.waitFor"
    ),
}


@pytest.mark.usefixtures("needs_proc")
@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_fault_fails_its_variant_only_and_the_run_ends_clean(
    name: str, pytester: pytest.Pytester, tmp_path: Path
) -> None:
    fault = FAULTS[name]
    pidfile = tmp_path / "helper.pid" if fault.helper else None
    run = run_conformance(
        pytester, str(SCENARIO), f"--port-cmd={fault_command(name, pidfile)}", f"--port-timeout={fault.timeout:g}"
    )
    assert run.outcome == {"passed": VARIANTS - fault.fails, "failed": fault.fails, "error": 0}, run.text
    if fault.fails:
        failed = [line for line in run.text.splitlines() if line.startswith("FAILED ")]
        assert len(failed) == 1 and failed[0].endswith(f"{SCENARIO.name}::{TARGET}"), run.text
        assert fault.says in run.text, run.text
        assert f"(normative, {fault.reason})" in run.text, run.text
        assert f"fault {name} during client.run of {TARGET}" in run.text, "the shim's stderr tail is missing"
    assert not run.harness_tracebacks(), run.text
    assert run.seconds < BUDGET, f"the run took {run.seconds:.1f} s (budget {BUDGET:g} s)"
    assert our_leftovers() == [], "processes left behind"
    if pidfile is not None:
        helper = pid_from(pidfile)
        assert not alive(helper), f"the shim's helper {helper} outlived the run"


def test_a_shim_exit_is_noticed_at_once_though_a_grandchild_holds_its_stdout(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Not after the per-call timeout, and not reported as a hang."""
    pidfile = tmp_path / "helper.pid"
    one = f"{SCENARIO}::{TARGET}"
    run = run_conformance(pytester, one, f"--port-cmd={fault_command('exit-grandchild-holds-stdout', pidfile)}",
                          f"--port-timeout={PATIENT:g}")
    assert run.outcome["failed"] == 1, run.text
    assert "did not answer" not in run.text, run.text
    assert run.seconds < PATIENT / 3, f"the exit was noticed only after {run.seconds:.1f} s"
    assert not alive(pid_from(pidfile))
