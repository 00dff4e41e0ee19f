"""Shims a zygote forks straight onto a differential worker's pipes, with no client process.

shim/warm_ports.py turns a reference port's command into a fork client
(``shim/fork_client.py``): a small Python process per shim that hands its streams to the zygote
and then mirrors the child's exit. Its start-up (~40 ms of CPU at load 9, measured over 50
restarts, against ~15 ms for the zygote's fork of the shim itself) was the largest cost of a
shim start, and a generated scenario that resumes in a restarted shim starts two (~3 per
100 scenarios). Here the worker speaks the client's protocol itself: it makes the three
pipes, hands the zygote their far ends, and keeps the connection, on which the zygote sends
the child's pid, then its wait status when it ends (:class:`ForkedChild`).

The shim is the same process as before (the zygote's child, a fresh process that has served
nothing), with the same streams, environment (the instance token included), folder and exit
status; what differs is who waits for it. Ending it needs no ``/proc`` sweep: the reference
shim starts no process of its own, and whatever the zygote forked ends with the zygote
(``shim/fork_server.py``). A session that cannot reach its zygote starts the client command as
before, which reports the failure as any shim start does.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, cast

from toolnexus_conformance.shim import process_tree
from toolnexus_conformance.shim.child import OUTSIDE_SIGNALS, ShimChild
from toolnexus_conformance.shim.fork_server import STATUS, client_target
from toolnexus_conformance.shim.process import ShimProcess
from toolnexus_conformance.shim.session import ShimSession

# How often a thread that waits for the exit while another one reads the zygote's
# connection looks again (only then: the reader wakes the others when it reads the status).
WAIT_POLL_S = 0.05
# The exit code the fork client gives when the zygote closed the connection without a status.
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
        # Only the streams are read from ``proc`` (shim_process, shim_session): the rest of
        # ShimChild's use of its Popen is overridden below.
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

    def _exited_now(self) -> bool:
        return self._wait(0.0)

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


class ForkedShimSession(ShimSession):
    """A session whose every process (spares too) the zygote forks straight onto its pipes;
    its command (the fork client) starts one only when the zygote cannot be reached."""

    def __init__(self, argv: Sequence[str], socket_path: str, args: Sequence[str], *,
                 env: Mapping[str, str] | None = None, process: ShimProcess | None = None) -> None:
        super().__init__(argv, env=env, process=process)
        self._socket_path, self._args = socket_path, list(args)

    def _forked(self) -> ForkedChild | None:
        try:
            return ForkedChild(self._socket_path, self._args, cwd=self.cwd, env=self.env)
        except OSError:
            return None  # the command (the fork client) starts it: it reaches the zygote, or says why not

    def _spawn(self) -> ShimChild:
        return self._forked() or super()._spawn()

    def _take_spare(self) -> ShimChild | None:
        return super()._take_spare() or self._forked()


def session_for(argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> ShimSession:
    """A session for ``argv``: on forks straight from the zygote when ``argv`` is a fork
    client's command (a warm reference port), otherwise an ordinary one. Neither keeps a
    transcript: a search shows none, and its sessions serve every run of the search."""
    process = ShimProcess(keep_transcript=False)
    target = client_target(argv)
    if target is None:
        return ShimSession(argv, env=env, process=process)
    socket_path, args = target
    return ForkedShimSession(argv, socket_path, args, env=env, process=process)
