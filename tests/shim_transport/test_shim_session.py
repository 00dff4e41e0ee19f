"""ShimSession: the initialize handshake, version refusal, restart-and-replay, the restart budget."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from transportkit import CALL_TIMEOUT, assert_reaped, faux_command

from toolnexus_conformance.helpers.errors import (
    ProtocolVersionMismatch,
    ShimCrashed,
    ShimError,
    ShimProtocolError,
    ShimRestartBudgetExceeded,
    ShimStartError,
    ShimTimeout,
)
from toolnexus_conformance.shim.session import Handshake, ShimSession


def session_for(mode: str, once: Path | None = None, **options: object) -> ShimSession:
    return ShimSession(faux_command(mode, once), start_timeout=CALL_TIMEOUT, **options)  # type: ignore[arg-type]


def test_handshake_is_validated_and_recorded() -> None:
    with session_for("ok") as session:
        handshake = session.ensure_alive()
        assert handshake == Handshake(
            port="faux", language="python", library_name="faux-shim", library_version="0.0.1",
            protocol_version=1, capabilities=("relay", "stream"), raw=handshake.raw,
        )
        assert handshake.supports("relay") and not handshake.supports("durable")
        assert session.ensure_alive() is handshake  # no second initialize while alive
        sent = [line for d, line in session.process.transcript.entries if d == "out"]
        assert sent == ['{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}']


def test_version_mismatch_is_refused_once_and_for_all() -> None:
    with session_for("version-mismatch") as session:
        with pytest.raises(ProtocolVersionMismatch) as info:
            session.ensure_alive()
        text = str(info.value)
        assert "shim speaks shim-protocol version 99, this harness speaks 1" in text
        assert "shim command: " in text and "faux: started in mode version-mismatch" in text
        with pytest.raises(ProtocolVersionMismatch):
            session.call("client.run", {}, timeout=CALL_TIMEOUT)
        assert session.starts == 1  # restarting cannot fix a version mismatch


def test_a_shim_refusing_our_version_with_32003_is_a_mismatch() -> None:
    with session_for("version-refused") as session:
        with pytest.raises(ProtocolVersionMismatch, match="refused protocol version 1: this shim speaks version 2"):
            session.ensure_alive()


def test_bad_handshake_shape_is_a_protocol_error() -> None:
    with session_for("bad-handshake") as session:
        with pytest.raises(ShimProtocolError, match="bad handshake: initialize result.library must be an object"):
            session.ensure_alive()


@pytest.mark.parametrize(
    ("mode", "error", "stderr_says"),
    [
        ("crash-mid-run", ShimCrashed, "panic: lost the port mid-run"),
        ("killed-mid-run", ShimCrashed, "about to be killed"),
        ("hang", ShimTimeout, "client.run: hanging now"),
        ("non-json", ShimProtocolError, "writing garbage to stdout"),
        ("wrong-id", ShimProtocolError, "answering with the wrong id"),
        ("oversized", ShimProtocolError, "writing a 9 MiB line"),
    ],
)
def test_failure_then_restart_and_the_run_goes_on(
    mode: str, error: type[ShimError], stderr_says: str, tmp_path: Path
) -> None:
    with session_for(mode, once=tmp_path / "once") as session:
        session.ensure_alive()
        broken_pid = session.process.pid
        with pytest.raises(error) as info:
            session.call("client.run", {}, timeout=1.0)
        assert stderr_says in str(info.value)
        assert not session.alive
        assert broken_pid is not None
        assert_reaped(broken_pid)
        assert session.call("client.run", {"echo": "next"}, timeout=CALL_TIMEOUT)["echo"] == "next"
        assert (session.starts, session.recoveries) == (2, 1)
        inits = [line for d, line in session.process.transcript.entries if d == "out" and "initialize" in line]
        assert len(inits) == 2  # the handshake was replayed on the fresh process


def test_crash_at_start_then_restart(tmp_path: Path) -> None:
    with session_for("crash-at-start", once=tmp_path / "once") as session:
        with pytest.raises(ShimCrashed, match="exited with code 3") as info:
            session.ensure_alive()
        assert "fatal: cannot load the port library" in str(info.value)
        assert session.call("client.run", {"echo": 1}, timeout=CALL_TIMEOUT)["echo"] == 1
        assert session.recoveries == 1


def test_a_shim_that_dies_between_calls_is_restarted(tmp_path: Path) -> None:
    with session_for("exit-after-initialize", once=tmp_path / "once") as session:
        session.ensure_alive()
        deadline = time.monotonic() + CALL_TIMEOUT
        while session.alive and time.monotonic() < deadline:
            time.sleep(0.02)
        assert session.call("client.run", {"echo": 2}, timeout=CALL_TIMEOUT)["echo"] == 2
        assert session.recoveries == 1


def test_restart_budget_stops_an_endless_crash_loop() -> None:
    with session_for("crash-at-start", restart_budget=2) as session:
        for _ in range(3):  # the first start plus two restarts
            with pytest.raises(ShimCrashed):
                session.ensure_alive()
        with pytest.raises(ShimRestartBudgetExceeded, match=r"after 2 restarts \(budget 2\)") as info:
            session.call("client.run", {}, timeout=CALL_TIMEOUT)
        assert "fatal: cannot load the port library" in str(info.value)
        assert session.starts == 3


def test_deliberate_restarts_do_not_use_the_budget() -> None:
    with session_for("ok", restart_budget=0) as session:
        first = session.ensure_alive()
        for _ in range(3):
            assert session.restart() is not first
        assert (session.restarts, session.recoveries) == (3, 0)
        assert session.call("client.run", {"echo": 3}, timeout=CALL_TIMEOUT)["echo"] == 3


def test_a_shim_that_cannot_be_spawned_is_not_retried() -> None:
    with ShimSession(["definitely-not-a-shim-binary"]) as session:
        with pytest.raises(ShimStartError, match="could not start the shim"):
            session.ensure_alive()
        with pytest.raises(ShimStartError):
            session.ensure_alive()
        assert session.starts == 1
