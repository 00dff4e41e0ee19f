"""Warm starts of the reference shims in a differential search (harness/differential_warm.py,
differential_zygote.py on fork_server.py and fork_client.py): only the reference shim is forked
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

from harness.differential_warm import reference_shim, warm_port
from harness.fork_server import CLIENT
from harness.ports import ResolvedPort, resolve
from harness.shim_session import ShimSession

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
        info = os.waitid(os.P_PID, client, os.WEXITED | os.WNOWAIT)
        assert info is not None and info.si_code == os.CLD_KILLED and info.si_status == signal.SIGKILL
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
