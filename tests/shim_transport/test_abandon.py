"""ShimSession.abandon: the end of a session that a run on another thread still uses. The
call under way fails at once (not at its timeout), the process is reaped, and no later
call starts another one."""

from __future__ import annotations

import threading
import time

import pytest
from transportkit import assert_reaped, faux_command

from harness.errors import ShimError, ShimNotRunning
from harness.shim_session import ShimSession

PATIENT = 60.0  # the hung call's timeout: abandon must not wait for it


def test_abandon_fails_the_call_under_way_at_once_and_starts_nothing_after() -> None:
    session = ShimSession(faux_command("hang"), start_timeout=10)
    session.ensure_alive()
    pid = session.process.pid
    assert pid is not None
    failure: list[BaseException] = []

    def hung_call() -> None:
        try:
            session.call("client.run", {}, timeout=PATIENT)
        except ShimError as exc:
            failure.append(exc)

    caller = threading.Thread(target=hung_call)
    caller.start()
    time.sleep(0.3)  # the call is waiting on the hung shim
    began = time.monotonic()
    session.abandon("the session ended")
    caller.join(PATIENT)
    assert time.monotonic() - began < 10, "the call under way waited for its timeout"
    assert failure, "the call under way did not fail"
    assert_reaped(pid)
    with pytest.raises(ShimNotRunning, match="the session ended"):
        session.ensure_alive()
    assert session.process.pid is None, "a new process was started after abandon"
    session.close()
