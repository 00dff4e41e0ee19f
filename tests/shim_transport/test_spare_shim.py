"""ShimSession.start_ahead/prepare_restart/expect_restarts: the next processes are spawned
ahead and taken over by the first start or by restarts, replaying ``initialize``; unused spares
are ended with the session. A spare killed from outside while idle is replaced by a fresh
start whose failure is reported as usual; one that crashed by itself is taken over, so its
crash is reported."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from transportkit import CALL_TIMEOUT, assert_reaped, faux_command

from harness.errors import ShimCrashed
from harness.shim_session import SPARES_AHEAD, ShimSession


def session_for(mode: str, once: Path | None = None) -> ShimSession:
    return ShimSession(faux_command(mode, once), start_timeout=CALL_TIMEOUT)


def _wait_for_exit(pid: int) -> None:
    deadline = time.monotonic() + CALL_TIMEOUT
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not exit")


def test_a_restart_takes_over_the_spare_and_replays_initialize() -> None:
    with session_for("ok") as session:
        session.ensure_alive()
        old_pid = session.process.pid
        session.prepare_restart()
        (spare,) = session._spares
        assert spare.pid != old_pid
        session.prepare_restart()  # one is ready already
        assert session._spares == [spare]
        session.restart()
        assert session.process.pid == spare.pid and session._spares == []
        assert_reaped(old_pid)
        sent = [line for d, line in session.process.transcript.entries if d == "out" and '"initialize"' in line]
        assert len(sent) == 2  # the first process's and the spare's handshake
        assert session.call("client.run", {"echo": 7}, timeout=CALL_TIMEOUT)["echo"] == 7
        assert (session.restarts, session.recoveries) == (1, 0)


def test_an_unused_spare_is_ended_and_reaped_with_the_session() -> None:
    session = session_for("ok")
    session.ensure_alive()
    session.expect_restarts(SPARES_AHEAD + 2)
    spares = list(session._spares)
    assert len(spares) == SPARES_AHEAD
    session.close()
    assert session._spares == []
    for spare in spares:
        assert_reaped(spare.pid)


def test_a_spare_that_died_idle_is_replaced_and_a_failing_start_is_reported(tmp_path: Path) -> None:
    with session_for("ok") as session:
        session.ensure_alive()
        session.prepare_restart()
        (spare,) = session._spares
        os.kill(spare.pid, signal.SIGKILL)
        _wait_for_exit(spare.pid)
        session.restart()
        assert session.process.pid != spare.pid
        assert_reaped(spare.pid)
        assert session.call("client.run", {"echo": 8}, timeout=CALL_TIMEOUT)["echo"] == 8

    with session_for("crash-at-start") as broken:
        with pytest.raises(ShimCrashed):
            broken.ensure_alive()
        broken.prepare_restart()  # the spare crashes at start too, before it is taken over
        (spare,) = broken._spares
        _wait_for_exit(spare.pid)
        with pytest.raises(ShimCrashed, match="exited with code 3") as info:
            broken.ensure_alive()
        assert "fatal: cannot load the port library" in str(info.value)
        assert broken.process.pid != spare.pid


def test_expected_restarts_keep_spares_in_stock_until_the_last() -> None:
    with session_for("ok") as session:
        session.ensure_alive()
        session.expect_restarts(SPARES_AHEAD + 1)
        pids = [spare.pid for spare in session._spares]
        assert len(pids) == SPARES_AHEAD
        session.restart()  # takes the oldest and spawns the last one expected
        assert session.process.pid == pids[0]
        assert [s.pid for s in session._spares][: SPARES_AHEAD - 1] == pids[1:]
        assert len(session._spares) == SPARES_AHEAD
        for _ in range(SPARES_AHEAD):
            session.restart()
        assert session._spares == []  # no restart is expected any more: none is spawned
        assert session.call("client.run", {"echo": 9}, timeout=CALL_TIMEOUT)["echo"] == 9
        assert (session.restarts, session.recoveries) == (SPARES_AHEAD + 1, 0)


def test_a_process_started_ahead_becomes_the_first_shim_and_no_restart_is_counted() -> None:
    with session_for("ok") as session:
        session.start_ahead()
        (ahead,) = session._spares
        session.start_ahead()  # one is on its way already
        assert session._spares == [ahead]
        session.ensure_alive()
        assert session.process.pid == ahead.pid and session._spares == []
        assert (session.starts, session.restarts, session._restarts_expected) == (1, 0, 0)
        session.start_ahead()  # a live shim needs none
        assert session._spares == []


def test_a_process_started_ahead_and_never_used_is_reaped_with_the_session() -> None:
    session = session_for("ok")
    session.start_ahead()
    (ahead,) = session._spares
    session.close()
    assert_reaped(ahead.pid)


def test_a_spare_that_crashed_by_itself_before_it_was_taken_is_reported(tmp_path: Path) -> None:
    # A shim that crashes at start must not pass unseen because its process was spawned
    # ahead and died before anyone spoke to it: the start that takes it over fails.
    with session_for("crash-at-start", once=tmp_path / "crashed") as session:
        session.start_ahead()
        (spare,) = session._spares
        _wait_for_exit(spare.pid)
        with pytest.raises(ShimCrashed, match="exited with code"):
            session.ensure_alive()
        assert_reaped(spare.pid)
        assert session.call("client.run", {"echo": 9}, timeout=CALL_TIMEOUT)["echo"] == 9  # the next start works
