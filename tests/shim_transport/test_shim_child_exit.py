"""ShimChild.exited: waits for the exit without reaping it, wakes when the process exits
(a pidfd where the kernel has one, a short poll where not), and gives up at its timeout."""

from __future__ import annotations

import os
import sys
import time

import pytest

from toolnexus_conformance.shim.child import ShimChild

SLEEPER = [sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(0.05)"]


@pytest.fixture(params=["pidfd", "poll"])
def child(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> ShimChild:
    if request.param == "poll":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    spawned = ShimChild(SLEEPER, cwd=None, env=None)
    request.addfinalizer(lambda: spawned.terminate(0.0))
    return spawned


def test_it_times_out_while_the_process_runs(child: ShimChild) -> None:
    started = time.monotonic()
    assert child.exited(0.1) is False
    assert time.monotonic() - started >= 0.1


def test_it_sees_the_exit_and_leaves_the_process_unreaped(child: ShimChild) -> None:
    assert child.proc.stdin is not None
    child.proc.stdin.close()  # the sleeper exits 50 ms later
    assert child.exited(10.0) is True
    # Not reaped: the exit status is still there to collect, once.
    assert os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    assert child.reap() == 0
    assert child.exited() is True  # reaped now: still "exited"
