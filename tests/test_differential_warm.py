"""Warm starts of the reference shims in a differential search (toolnexus_conformance/shim/warm_ports.py,
shim/zygote.py on fork_server.py and fork_client.py): only the reference shim is forked
from a zygote; a forked shim answers as a cold one does, each start (a restart too) is a
fresh process, a shim whose client is killed goes with it, a crashing shim is seen as a
crash, the zygote leaves no process behind, and a zygote that cannot start leaves the port
as it was (cold starts).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import proc_tree
import pytest

from toolnexus_conformance.helpers.errors import ShimError
from toolnexus_conformance.shim.fork_server import CLIENT, client_command, client_target
from toolnexus_conformance.shim.forked import ForkedChild, ForkedShimSession, session_for
from toolnexus_conformance.shim.ports import ResolvedPort, resolve
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.shim.warm_ports import reference_shim, warm_port, warm_ports

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_SHIM = str(ROOT / "shims" / "reference" / "shim.py")


def _zygote_pid(port: ResolvedPort) -> int:
    """The zygote serving ``port``'s socket: the one process whose command line names it."""
    socket_path = port.argv[-1]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if socket_path.encode() in cmdline and int(entry.name) != os.getpid() and CLIENT.name.encode() not in b" ".join(cmdline):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                    return int(entry.name)
    raise AssertionError(f"no zygote for {socket_path}")


def _alive(pid: int) -> bool:
    return proc_tree.state(pid) not in {"Z", "X", None}


def _wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("name", ["reference", "reference-norelay"])
def test_the_reference_shims_are_recognised(name: str) -> None:
    assert reference_shim(resolve(name, None, None, None).argv) is not None


@pytest.mark.parametrize("argv", [
    [sys.executable, str(ROOT / "tests" / "mutants" / "mutant_shim.py"), "assistant-args-recompacted"],
    [sys.executable, REFERENCE_SHIM, "--some-other-flag"],
    ["sh", "-c", f"exec {sys.executable} {REFERENCE_SHIM}"],
    ["./shim"],
])
def test_any_other_command_boots_cold(argv: list[str]) -> None:
    assert reference_shim(argv) is None
    port = ResolvedPort("adhoc", argv, 10.0, {}, "--port-cmd=x")
    with ExitStack() as stack:
        assert warm_port(port, stack) is port


def test_warm_ports_warms_each_reference_port_in_its_place_and_leaves_any_other() -> None:
    cold = ResolvedPort("adhoc", ["./shim"], 10.0, {}, "--port-cmd=x")
    ports = [resolve("reference", None, None, None), cold, resolve("reference-norelay", None, None, None)]
    with ExitStack() as stack:
        warm = warm_ports(ports, stack)
        assert warm[1] is cold
        targets = [client_target(port.argv) for port in (warm[0], warm[2])]
        assert all(targets) and targets[0] != targets[1], "each reference port needs its own zygote"
        for port in (warm[0], warm[2]):
            with ShimSession(port.argv, env={**os.environ, **port.env}) as session:
                assert session.ensure_alive().raw["port"] == ("reference" if port is warm[0] else "reference-norelay")


@pytest.mark.parametrize("name", ["reference", "reference-norelay"])
def test_a_forked_shim_answers_as_a_cold_one_and_each_start_is_a_fresh_process(name: str) -> None:
    cold_port = resolve(name, None, None, None)
    with ExitStack() as stack:
        port = warm_port(cold_port, stack)
        assert port.argv[-2:] == [str(CLIENT), port.argv[-1]], port.argv
        zygote = _zygote_pid(port)
        cold = stack.enter_context(ShimSession(cold_port.argv, env={**os.environ, **cold_port.env}))
        warm = stack.enter_context(ShimSession(port.argv, env={**os.environ, **port.env}))
        assert warm.ensure_alive().raw == cold.ensure_alive().raw
        first = proc_tree.children(zygote)
        assert len(first) == 1, first
        # Out of the search's session, as a cold shim is: a Ctrl-C to the search's group
        # must not kill the shims in the middle of the runs it lets finish.
        assert os.getsid(zygote) != os.getsid(0) and os.getsid(next(iter(first))) != os.getsid(0)
        warm.restart()
        second = proc_tree.children(zygote)
        assert len(second) == 1 and second != first, (first, second)
        assert _wait_gone(first.pop()), "the replaced shim is still alive"
        described = warm.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=10)
        assert described == cold.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=10)
    assert _wait_gone(zygote), "the zygote outlived its search"
    assert not Path(port.argv[-1]).parent.exists(), "the zygote's socket folder was left behind"
    assert all(_wait_gone(pid) for pid in second), "a forked shim outlived the zygote"


def _one_forked_shim(stack: ExitStack) -> tuple[int, ShimSession, int, int]:
    """A warm reference port's zygote, a session on it, its one forked shim and the client."""
    port = warm_port(resolve("reference", None, None, None), stack)
    zygote = _zygote_pid(port)
    session = stack.enter_context(ShimSession(port.argv, env={**os.environ, **port.env}))
    session.ensure_alive()
    (shim,) = proc_tree.children(zygote)
    client = session.process.pid
    assert client is not None and client != shim
    return zygote, session, shim, client


def _killed_by(session: ShimSession, pid: int) -> int | None:
    """The signal that ended ``pid``, looked at without reaping it; the session's exit
    watcher may have reaped it first, and then its Popen holds the status."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        child = session.process._child
        code = child.proc.wait() if child is not None and child.pid == pid else None
        return -code if code is not None and code < 0 else None
    return info.si_status if info is not None and info.si_code == os.CLD_KILLED else None


def test_a_killed_client_takes_its_shim_with_it() -> None:
    with ExitStack() as stack:
        _, _, shim, client = _one_forked_shim(stack)
        os.kill(client, signal.SIGKILL)
        assert _wait_gone(shim), "the shim outlived its killed client"


def test_a_forked_shim_that_crashes_is_seen_as_a_crash_and_replaced() -> None:
    with ExitStack() as stack:
        zygote, session, shim, client = _one_forked_shim(stack)
        os.kill(shim, signal.SIGKILL)
        # The client ends as its shim did, so the harness sees what killed the port.
        assert _killed_by(session, client) == signal.SIGKILL
        assert not session.alive
        session.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=10)  # a fresh process
        assert session.recoveries == 1
        assert proc_tree.children(zygote) - {shim}


def test_a_zygote_that_cannot_start_leaves_the_port_cold(tmp_path: Path) -> None:
    broken = tmp_path / "shims" / "reference" / "shim.py"
    broken.parent.mkdir(parents=True)
    broken.write_text("raise SystemExit('this shim cannot even be imported')\n")
    port = ResolvedPort("reference", [sys.executable, str(broken)], 10.0, {}, "--port=reference")
    with ExitStack() as stack:
        assert warm_port(port, stack) is port


# The differential's own sessions (toolnexus_conformance/shim/forked.py): the worker hands its
# pipes to the zygote itself, with no client process in between.


def _forked_session(stack: ExitStack, name: str = "reference") -> tuple[int, ShimSession]:
    port = warm_port(resolve(name, None, None, None), stack)
    session = stack.enter_context(session_for(port.argv, env={**os.environ, **port.env}))
    assert isinstance(session, ForkedShimSession)
    return _zygote_pid(port), session


def _started_child(stack: ExitStack) -> tuple[int, ShimSession, ForkedChild]:
    """A forked session whose shim is up, and the forked child process it talks to."""
    zygote, session = _forked_session(stack)
    session.ensure_alive()
    child = session.process._child
    assert isinstance(child, ForkedChild)
    return zygote, session, child


@pytest.mark.parametrize("name", ["reference", "reference-norelay"])
def test_a_directly_forked_shim_answers_as_a_cold_one_with_no_client_process(name: str) -> None:
    cold_port = resolve(name, None, None, None)
    with ExitStack() as stack:
        zygote, warm = _forked_session(stack, name)
        cold = stack.enter_context(ShimSession(cold_port.argv, env={**os.environ, **cold_port.env}))
        assert warm.ensure_alive().raw == cold.ensure_alive().raw
        (shim,) = proc_tree.children(zygote)
        assert warm.process.pid == shim, "the session talks to the zygote's child itself"
        assert not [p for p in proc_tree.descendants(os.getpid()) if str(CLIENT) in proc_tree.cmdline(p)], \
            "a fork client was started"
        warm.prepare_restart()  # a spare, forked ahead as well
        warm.restart()
        (second,) = proc_tree.children(zygote) - {shim} or {None}
        assert second is not None and warm.process.pid == second
        assert _wait_gone(shim), "the replaced shim is still alive"
        toolkit = {"toolkit": {"tools": []}}
        assert warm.call("toolkit.describe", toolkit, timeout=10) == cold.call("toolkit.describe", toolkit, timeout=10)
        warm.close()
        assert _wait_gone(second), "a closed session left its shim running"
        assert warm.process.pid is None
    assert _wait_gone(zygote), "the zygote outlived its search"


def test_a_directly_forked_shim_killed_from_outside_is_seen_as_killed_and_replaced() -> None:
    with ExitStack() as stack:
        zygote, session, child = _started_child(stack)
        session.process.transcript.keep = True  # a search's session keeps none; its notes are read below
        os.kill(child.pid, signal.SIGKILL)
        assert child.exited(5.0) and child.killed_from_outside() and child.reap() == -signal.SIGKILL
        assert not session.alive

        def notes() -> list[str]:
            return [text for _, text in session.process.transcript.since()]

        deadline = time.monotonic() + 5  # the exit is reported once the shim's last lines are read
        while not any("killed by signal 9" in note for note in notes()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert any("killed by signal 9" in note for note in notes()), notes()
        session.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=10)  # a fresh process
        assert session.recoveries == 1 and session.process.pid in proc_tree.children(zygote)


def test_a_directly_forked_shim_reports_its_own_exit_status() -> None:
    with ExitStack() as stack:
        _, session, child = _started_child(stack)
        assert not child.exited() and not child.exited(0.05), "a serving shim reads as exited"
        session.process.call("shutdown", None, timeout=10)  # the shim ends by itself
        assert child.exited(10.0) and child.reap() == 0 and not child.killed_from_outside()


def test_a_shim_whose_zygote_is_killed_is_ended_and_seen_as_gone() -> None:
    with ExitStack() as stack:
        zygote, session, child = _started_child(stack)
        os.kill(zygote, signal.SIGKILL)
        assert child.exited(5.0), "the zygote's death went unnoticed"
        assert _wait_gone(child.pid), "the orphaned shim was left running"
        with pytest.raises(ShimError):
            session.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=10)


def test_a_session_that_cannot_reach_its_zygote_starts_the_client_which_says_why(tmp_path: Path) -> None:
    argv = client_command(sys.executable, tmp_path / "no-zygote.sock")
    with session_for(argv) as session:
        assert isinstance(session, ForkedShimSession)
        with pytest.raises(ShimError, match="cannot reach the fork server"):
            session.ensure_alive()


def test_any_other_command_gets_an_ordinary_session() -> None:
    argv = resolve("reference", None, None, None).argv
    assert client_target(argv) is None
    with session_for(argv) as session:
        assert type(session) is ShimSession
