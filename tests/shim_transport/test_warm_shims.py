"""WarmShimSession: a reference port's session forks its shims (first start, spares and
restarts) from one zygote and stops it with the session; when the zygote does not come up,
or is gone mid-session, each start is cold and the session works the same."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import harness.warm_shims as warm_shims
from harness.ports import resolve
from harness.shim_child import ShimChild
from harness.shim_session import ShimSession
from harness.warm_shims import ForkedChild, WarmShimSession, shim_session

REFERENCE = resolve("reference", None, None, None, build=False).argv


def _child(session: ShimSession) -> ShimChild:
    child = session.process._child
    assert child is not None, "the session has no process"
    return child


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


def test_every_process_is_forked_from_one_zygote_and_a_lost_zygote_leaves_starts_cold() -> None:
    session = WarmShimSession(REFERENCE)
    try:
        session.start_ahead()
        zygote = session.zygote
        assert zygote is not None and zygote.poll() is None, "start_ahead launches the zygote"
        assert session.ensure_alive().port == "reference"
        first = _child(session)
        assert isinstance(first, ForkedChild), f"the first shim was started cold: {first!r}"
        session.expect_restarts(1)
        assert session.restart().port == "reference"
        second = _child(session)
        assert isinstance(second, ForkedChild) and second.pid != first.pid
        assert session.zygote is zygote, "one zygote for the whole session"

        os.kill(zygote.pid, signal.SIGKILL)  # the zygote's forks go with it
        zygote.wait()
        assert session.restart().port == "reference"
        assert not isinstance(_child(session), ForkedChild), "a start without its zygote is cold"
        cold_pid = _child(session).pid
    finally:
        session.close()
    assert session.zygote is None
    assert _gone(cold_pid) and _gone(first.pid), "a closed shim is reaped (by the zygote or the session)"


def test_a_zygote_that_never_comes_up_leaves_every_start_cold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(warm_shims, "ZYGOTE", tmp_path / "no-such-zygote.py")
    session = WarmShimSession(REFERENCE)
    try:
        assert session.ensure_alive().port == "reference"
        assert not isinstance(_child(session), ForkedChild)
        assert session.zygote is None, "a zygote that did not come up is stopped"
        assert session.restart().port == "reference"
        assert not isinstance(_child(session), ForkedChild)
    finally:
        session.close()
