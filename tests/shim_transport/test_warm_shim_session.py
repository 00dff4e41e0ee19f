"""WarmShimSession: a reference port's session starts its first shim cold (ahead, as any
port's) and forks every later one (restarts) from one zygote, launched when a restart is
announced and stopped with the session; when the zygote does not come up, or is gone
mid-session, each start is cold (with spares ahead) and the session works the same.

Which process forked which is read from /proc: a forked shim is a child of the zygote, a
cold one (or a spare booted ahead) a child of this process."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from proc_tree import children

import toolnexus_conformance.shim.warm_ports as differential_warm
from toolnexus_conformance.shim.ports import resolve
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.shim.warm_session import WarmShimSession, shim_session

REFERENCE = resolve("reference", None, None, None, build=False).argv


def _shim_pid(session: ShimSession) -> int:
    assert session.process is not None, "the session has no process"
    return session.process.pid


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_only_the_reference_shim_gets_a_warm_session() -> None:
    assert type(shim_session(REFERENCE)) is WarmShimSession
    assert type(shim_session([*REFERENCE, "--no-relay"])) is WarmShimSession
    assert type(shim_session([REFERENCE[0], "tests/plugin/broken_shim.py", "null"])) is ShimSession


def test_restarts_fork_from_one_zygote_and_a_zygote_gone_leaves_the_next_starts_cold() -> None:
    # One session for both (each costs a cold start and a zygote's).
    before = children(os.getpid())
    session = WarmShimSession(REFERENCE)
    try:
        session.start_ahead()
        assert session.ensure_alive().port == "reference"
        first = _shim_pid(session)
        assert first in children(os.getpid()), "the first shim is started cold"
        assert session.zygote is None, "a session that starts one shim launches no zygote"
        session.expect_restarts(4)
        zygote = session.zygote
        assert zygote is not None and zygote.poll() is None, "an announced restart launches the zygote"
        assert children(os.getpid()) - before == {first, zygote.pid}, "no spare idles ahead: a fork is ready at once"
        pids = [first]
        for _ in range(2):
            assert session.restart().port == "reference"
            child = _shim_pid(session)
            assert child in children(zygote.pid), f"a restart was started cold: {child}"
            pids.append(child)
        assert len(set(pids)) == 3 and session.zygote is zygote, "one zygote, a fresh process per start"
        assert session.restarts == 2

        os.kill(zygote.pid, signal.SIGKILL)  # its forks go with it
        zygote.wait()
        assert session.restart().port == "reference"
        assert _shim_pid(session) in children(os.getpid()), "a start without its zygote is cold"
        assert session.zygote is None
        spare = children(os.getpid()) - before - {_shim_pid(session)}
        assert spare, "cold again, the last announced restart gets its spare ahead"
        assert session.restart().port == "reference"
        assert _shim_pid(session) in spare
        pids.append(_shim_pid(session))
    finally:
        session.close()
    assert zygote.poll() is not None, "the zygote is stopped"
    assert all(_gone(pid) for pid in pids[:2] + pids[3:]), "every shim is ended and reaped (by the session or the zygote)"


def test_a_zygote_that_never_comes_up_leaves_every_start_cold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(differential_warm, "ZYGOTE", tmp_path / "no-such-zygote.py")
    session = WarmShimSession(REFERENCE)
    try:
        assert session.ensure_alive().port == "reference"
        session.expect_restarts(1)
        assert session.restart().port == "reference"
        assert _shim_pid(session) in children(os.getpid()), "the restart started cold"
        assert session.zygote is None, "a zygote that did not come up is stopped"
    finally:
        session.close()
