"""The ``forked`` launch (``launch = "forked"`` in ``ports.toml``): a Python shim's
processes forked from a warm zygote of it instead of booted cold.

A cold start of a Python shim pays the interpreter and its imports; a fork of a process
that has them loaded pays the fork. :class:`ForkedLauncher` launches a zygote of the port's
command (``PYTHON SCRIPT [ARG...]``, run by ``shim/zygote.py`` on ``shim/fork_server.py``)
when its session first wants a process, ahead or now (the zygote costs what a cold start
costs, and boots while the caller works on), and forks each process from it straight onto
the session's own pipes (:class:`ForkedChild`): a fresh process that has served nothing, with
the session's environment, folder and its own instance token. Every shim of the session is
thus the same program in the same state, tuned alike (``shim/zygote.py``). The zygote is stopped with the session. A differential search shares one
zygote per port among its workers (:func:`warm_ports`, which sets ``fork_server`` on the
port). When a zygote does not come up or cannot be reached, processes are started cold as
by the plain launcher: slower, never different.

:class:`ForkedChild` speaks the fork server's client protocol itself: it makes the three
pipes, hands the zygote their far ends, and keeps the connection, on which the zygote sends
the child's pid, then its wait status when it ends. Ending it needs no ``/proc`` sweep: the
reference shim starts no process of its own, and whatever the zygote forked ends with the
zygote.
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from toolnexus_conformance.shim import fork_server, process_tree
from toolnexus_conformance.shim.child import OUTSIDE_SIGNALS, ShimChild
from toolnexus_conformance.shim.fork_server import STATUS
from toolnexus_conformance.shim.launch import Launcher
from toolnexus_conformance.shim.ports import ResolvedPort

__all__ = ["ZYGOTE", "ForkedChild", "ForkedLauncher", "Zygote", "warm_ports", "zygote_command"]

ZYGOTE = Path(__file__).resolve().with_name("zygote.py")
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
# How often a thread that waits for the exit while another one reads the zygote's
# connection looks again (only then: the reader wakes the others when it reads the status).
WAIT_POLL_S = 0.05
# The exit code given when the zygote closed the connection without a status.
NO_STATUS_EXIT = 1


@dataclass(frozen=True)
class _Streams:
    """The part of a ``subprocess.Popen`` the shim transport reads: the pipes and the pid."""

    pid: int
    stdin: IO[bytes]
    stdout: IO[bytes]
    stderr: IO[bytes]


class ForkedChild(ShimChild):
    """A shim forked by the zygote at ``socket_path``, with the interface of a spawned one.

    Not this process's child: its exit is the wait status the zygote sends on the
    connection (read once, by whichever thread gets there first; the others wait for it)."""

    def __init__(self, socket_path: str, args: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None) -> None:
        """Raises OSError when the zygote cannot be reached or does not fork."""
        self.token = process_tree.new_token()
        child_env = {**(os.environ if env is None else env), process_tree.TOKEN_VAR: self.token}
        request = json.dumps({"argv": list(args), "env": child_env, "cwd": cwd or os.getcwd()}).encode() + b"\n"
        stdin, stdout, stderr = os.pipe(), os.pipe(), os.pipe()
        far = (stdin[0], stdout[1], stderr[1])  # the child's ends
        near = (stdin[1], stdout[0], stderr[0])
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(socket_path)
            conn.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", far))])
            pid = _receive_int(conn)
            if pid is None:
                raise OSError(f"the fork server at {socket_path} closed the connection before forking")
        except BaseException:
            conn.close()
            for fd in near:
                os.close(fd)
            raise
        finally:
            for fd in far:  # the child holds them now: ours must not keep an EOF from coming
                os.close(fd)
        # Buffered, as subprocess.Popen makes them: the transport reads lines off stdout.
        streams = _Streams(pid, open(near[0], "wb"), open(near[1], "rb"), open(near[2], "rb"))
        # Only the streams and the pid are read from ``proc`` (ShimProcess, ShimSession): the
        # rest of ShimChild's use of its Popen is overridden below.
        self.proc = cast(Any, streams)
        self._pid = pid
        self._conn = conn
        self._reading = threading.Lock()  # held by the one thread that reads the connection
        self._done = threading.Event()
        self._returncode = NO_STATUS_EXIT

    @property
    def pid(self) -> int:
        return self._pid

    def exited(self, timeout: float = 0.0) -> bool:
        return self._wait(max(timeout, 0.0))

    def killed_from_outside(self) -> bool:
        return self._wait(0.0) and self._returncode < 0 and -self._returncode in OUTSIDE_SIGNALS

    def wait_for_exit(self) -> None:
        self._wait(None)

    def end_tree(self, sig: int) -> int:
        """Signal the shim while its status has not come (the zygote has not reaped it, so
        its pid is still its own); no descendant to sweep (see the module docstring)."""
        if not self._done.is_set():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._pid, sig)
        return 0

    def reap(self) -> int:
        self._wait(None)
        return self._returncode

    # terminate() is ShimChild's: grace, SIGTERM, SIGKILL through end_tree, then reap; its
    # descendant sweep never runs, since end_tree reports nothing forked.

    def _wait(self, timeout: float | None) -> bool:
        """Whether the shim has exited, waiting up to ``timeout`` (None: until it has)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._done.is_set():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._reading.acquire(blocking=False):
                try:
                    if not self._done.is_set() and select.select([self._conn], [], [], remaining)[0]:
                        self._read_status()
                finally:
                    self._reading.release()
            else:
                self._done.wait(WAIT_POLL_S if remaining is None else min(remaining, WAIT_POLL_S))
            if remaining == 0.0:
                break
        return self._done.is_set()

    def _read_status(self) -> None:
        """The wait status, once the connection is readable; the reading lock is held."""
        status = _receive_int(self._conn)
        if status is None:
            # The zygote went away without reaping it (killed): the shim may still run and
            # hold the pipes, and no status will ever come.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._pid, signal.SIGKILL)
        else:
            self._returncode = os.waitstatus_to_exitcode(status)
        self._conn.close()
        self._done.set()


def _receive_int(conn: socket.socket) -> int | None:
    data = b""
    while len(data) < STATUS.size:
        chunk = conn.recv(STATUS.size - len(data))
        if not chunk:
            return None
        data += chunk
    value: int = STATUS.unpack(data)[0]
    return value


def zygote_command(argv: Sequence[str], socket_path: str) -> list[str]:
    """The zygote of the Python shim ``argv`` (``PYTHON SCRIPT [ARG...]``) serving ``socket_path``."""
    return [argv[0], str(ZYGOTE), socket_path, *argv[1:]]


class Zygote:
    """One zygote of a shim command: launched at once (it boots while the caller works on),
    awaited on first use, stopped with its socket's folder."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="tn-shims-")
        self.socket_path = os.path.join(self.folder, "zygote.sock")
        self.process: subprocess.Popen[bytes] | None = fork_server.launch(zygote_command(argv, self.socket_path), env=dict(env))
        self._ready: bool | None = None  # None: not awaited yet

    def serving(self) -> bool:
        """Whether it serves, waiting for it to come up the first time (one that does not is stopped)."""
        if self.process is None:
            return False
        if self._ready is None:
            self._ready = fork_server.wait_ready(self.process, READY_TIMEOUT_S)
        return self._ready and self.process.poll() is None

    def stop(self) -> None:
        """Stop it (it ends and reaps every shim it forked that still runs) and reap it."""
        if self.process is not None:
            fork_server.stop(self.process, STOP_TIMEOUT_S)
            self.process = None
        shutil.rmtree(self.folder, ignore_errors=True)


class ForkedLauncher(Launcher):
    """Forks a session's shims from a zygote of its command: its own, launched on first
    need, or a running one's at ``socket_path``; cold starts when none serves."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, socket_path: str = "") -> None:
        self._argv = list(argv)
        self._env = dict(os.environ if env is None else env)
        self._shared = socket_path
        self._zygote: Zygote | None = None
        self._cold = False  # the zygote did not come up or went away: cold starts from then on

    @property
    def zygote(self) -> subprocess.Popen[bytes] | None:
        """This launcher's own zygote process while it runs (None before, cold, or after close)."""
        return None if self._zygote is None else self._zygote.process

    def ahead(self, wanted: int, restarts: int) -> int:
        if wanted > 0 or restarts > 0:
            self._launch()  # boots meanwhile
        return 0 if self._forks() else wanted  # a fork is ready at once: nothing idles ahead

    def spawn(self, argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None) -> ShimChild:
        socket_path = self._socket()
        if socket_path is not None:
            try:
                return ForkedChild(socket_path, argv[1:], cwd=cwd, env=env)
            except OSError:
                self._go_cold()  # gone since (killed): this start and the next ones are cold
        return ShimChild(argv, cwd=cwd, env=env)

    def close(self) -> None:
        if self._zygote is not None:
            self._zygote.stop()
        self._zygote, self._cold = None, False

    def _forks(self) -> bool:
        return not self._cold and (bool(self._shared) or self._zygote is not None)

    def _launch(self) -> None:
        if self._zygote is None and not self._cold and not self._shared:
            self._zygote = Zygote(self._argv, self._env)
            if self._zygote.process is None:
                self._go_cold()

    def _socket(self) -> str | None:
        """The serving zygote's socket; None: start cold (no zygote launched, or none serves)."""
        if self._cold:
            return None
        if self._shared:
            return self._shared
        self._launch()
        if self._zygote is None or not self._zygote.serving():
            self._go_cold()
            return None
        return self._zygote.socket_path

    def _go_cold(self) -> None:
        self._cold = True
        if self._zygote is not None:
            self._zygote.stop()
            self._zygote = None


def warm_ports(ports: Sequence[ResolvedPort], stack: ExitStack,
               meanwhile: Callable[[], object] | None = None) -> list[ResolvedPort]:
    """Each of ``ports`` whose registry launch is ``forked`` with a zygote of its own that
    ``stack`` stops, shared by every session made from the returned port (in this process or
    in processes forked from it); the others as they are, and a port that has one already
    too. The zygotes boot side by side; ``meanwhile`` runs while they do. A zygote that does
    not come up leaves its port's shims cold."""
    booting = [_boot(port, stack) for port in ports]
    if meanwhile is not None:
        meanwhile()
    return [port if zygote is None or not zygote.serving() else dataclasses.replace(port, fork_server=zygote.socket_path)
            for port, zygote in zip(ports, booting, strict=True)]


def _boot(port: ResolvedPort, stack: ExitStack) -> Zygote | None:
    if port.launch != "forked" or port.fork_server:
        return None
    zygote = Zygote(port.argv, {**os.environ, **port.env})
    stack.callback(zygote.stop)
    return zygote
