"""ShimSession.start_ahead/prepare_restart/expect_restarts: the next processes are spawned
ahead and taken over by the first start or by restarts, replaying ``initialize``; unused spares
are ended with the session. A spare killed from outside while idle is replaced by a fresh
start whose failure is reported as usual; one that crashed by itself is taken over, so its
crash is reported.

The spares are watched as the operating system shows them: the live children of this
process that the session started and is not talking to."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from proc_tree import children
from transportkit import CALL_TIMEOUT, assert_reaped, faux_command

from toolnexus_conformance.helpers.errors import ShimCrashed
from toolnexus_conformance.shim.session import SPARES_AHEAD, ShimSession


def session_for(mode: str, once: Path | None = None) -> ShimSession:
    return ShimSession(faux_command(mode, once), start_timeout=CALL_TIMEOUT)


def idle(session: ShimSession, before: set[int]) -> set[int]:
    """The processes the session started that idle beside the shim it talks to (``before``:
    this process's children before the session started)."""
    talking = {session.process.pid} if session.process is not None else set()
    return children(os.getpid()) - before - talking


def _all_children() -> set[int]:
    """This process's children, those that exited and are not reaped yet included."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        found.update(int(pid) for pid in task.read_text().split())
    return found


def _wait_for_exit(pid: int) -> None:
    deadline = time.monotonic() + CALL_TIMEOUT
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not exit")


def test_a_restart_takes_over_the_spare_and_replays_initialize() -> None:
    before = children(os.getpid())
    with session_for("ok") as session:
        session.ensure_alive()
        old_pid = session.process.pid
        session.prepare_restart()
        (spare,) = idle(session, before)
        session.prepare_restart()  # one is ready already
        assert idle(session, before) == {spare}
        session.restart()
        assert session.process.pid == spare and idle(session, before) == set()
        assert_reaped(old_pid)
        sent = [line for d, line in session.process.transcript.entries if d == "out" and '"initialize"' in line]
        assert len(sent) == 2  # the first process's and the spare's handshake
        assert session.call("client.run", {"echo": 7}, timeout=CALL_TIMEOUT)["echo"] == 7
        assert (session.restarts, session.recoveries) == (1, 0)


def test_an_unused_spare_is_ended_and_reaped_with_the_session() -> None:
    before = children(os.getpid())
    session = session_for("ok")
    session.ensure_alive()
    session.expect_restarts(SPARES_AHEAD + 2)
    spares = idle(session, before)
    assert spares, "restarts were announced: their processes boot ahead"
    session.close()
    for spare in spares:
        assert_reaped(spare)
    assert children(os.getpid()) - before == set()


def test_a_spare_that_died_idle_is_replaced_and_a_failing_start_is_reported(tmp_path: Path) -> None:
    before = children(os.getpid())
    with session_for("ok") as session:
        session.ensure_alive()
        session.prepare_restart()
        (spare,) = idle(session, before)
        os.kill(spare, signal.SIGKILL)
        _wait_for_exit(spare)
        session.restart()
        assert session.process.pid != spare
        assert_reaped(spare)
        assert session.call("client.run", {"echo": 8}, timeout=CALL_TIMEOUT)["echo"] == 8

    with session_for("crash-at-start") as broken:
        with pytest.raises(ShimCrashed):
            broken.ensure_alive()
        started = _all_children()
        broken.prepare_restart()  # the spare crashes at start too, before it is taken over
        (spare,) = _all_children() - started
        _wait_for_exit(spare)
        with pytest.raises(ShimCrashed, match="exited with code 3") as info:
            broken.ensure_alive()
        assert "fatal: cannot load the port library" in str(info.value)
        assert broken.process.pid != spare


def test_expected_restarts_keep_spares_in_stock_until_the_last() -> None:
    before = children(os.getpid())
    with session_for("ok") as session:
        session.ensure_alive()
        session.expect_restarts(SPARES_AHEAD + 1)
        for _ in range(SPARES_AHEAD + 1):
            ready = idle(session, before)
            assert ready, "an announced restart has its process booted ahead"
            session.restart()
            assert session.process.pid in ready
        assert idle(session, before) == set()  # no restart is expected any more: none is spawned
        assert session.call("client.run", {"echo": 9}, timeout=CALL_TIMEOUT)["echo"] == 9
        assert (session.restarts, session.recoveries) == (SPARES_AHEAD + 1, 0)


def test_a_process_started_ahead_becomes_the_first_shim_and_no_restart_is_counted() -> None:
    before = children(os.getpid())
    with session_for("ok") as session:
        session.start_ahead()
        (ahead,) = children(os.getpid()) - before
        session.start_ahead()  # one is on its way already
        assert children(os.getpid()) - before == {ahead}
        session.ensure_alive()
        assert session.process.pid == ahead and idle(session, before) == set()
        assert (session.starts, session.restarts) == (1, 0)
        session.start_ahead()  # a live shim needs none
        assert idle(session, before) == set()


def test_a_process_started_ahead_and_never_used_is_reaped_with_the_session() -> None:
    before = children(os.getpid())
    session = session_for("ok")
    session.start_ahead()
    (ahead,) = children(os.getpid()) - before
    session.close()
    assert_reaped(ahead)


def test_a_spare_that_crashed_by_itself_before_it_was_taken_is_reported(tmp_path: Path) -> None:
    # A shim that crashes at start must not pass unseen because its process was spawned
    # ahead and died before anyone spoke to it: the start that takes it over fails.
    before = _all_children()
    with session_for("crash-at-start", once=tmp_path / "crashed") as session:
        session.start_ahead()
        (spare,) = _all_children() - before
        _wait_for_exit(spare)
        with pytest.raises(ShimCrashed, match="exited with code"):
            session.ensure_alive()
        assert_reaped(spare)
        assert session.call("client.run", {"echo": 9}, timeout=CALL_TIMEOUT)["echo"] == 9  # the next start works
