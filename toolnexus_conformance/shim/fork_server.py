"""A warm process that forks fresh processes onto its clients' standard streams.

A Python shim spends most of its start importing what it needs before it reads a line; where
many shims are started (the forked reference shims, ``shim/forked.py``; the mutants' kill
runs, ``tests/mutants``), a fork server pays that once. The program built on it loads what
its children need, then calls :meth:`ForkServer.run`, which serves a Unix socket: each
connection (a ``ForkedChild``, or the mutants' fork client process) hands over the client's
stdin, stdout and stderr with one JSON line ``{"argv": [...], "env": {...}, "cwd": "..."}``;
the server forks a child that takes those streams, that environment and that folder, and
runs ``become(argv)``, whose result is its exit code.

Each child is still a process of its own, with its own pipes, that has served nothing
before. The server sends the client the child's pid, then its wait status when it ends (the
client exits the same way); when a client goes away first (the harness killed it), its child
is killed at once, so nothing holds the harness's pipes open. EOF on the server's stdin (its
starter is gone) or SIGTERM ends it and every child still alive, all reaped. It runs on one
thread, since it forks. :func:`start` and :func:`stop` are the starter's side.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolnexus_conformance.helpers.gc_tuning import for_short_lived_objects

STATUS = struct.Struct("!i")  # the child's pid, then its wait status, to the client
MAX_REQUEST = 1 << 20  # one client's argv, environment and folder, as JSON
READY_LINE = b"ready\n"

Become = Callable[[list[str]], int]


def start(argv: list[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
          ready_timeout_s: float = 60.0) -> subprocess.Popen[bytes] | None:
    """Start a fork server (``argv``) and wait until it serves; None when it does not come up
    (it is stopped then): the caller starts its shims cold, slower but never wrong."""
    server = launch(argv, env=env, cwd=cwd)
    return server if server is not None and wait_ready(server, ready_timeout_s) else None


def launch(argv: list[str], *, env: dict[str, str] | None = None,
           cwd: str | Path | None = None) -> subprocess.Popen[bytes] | None:
    """Start a fork server without waiting for it (it boots while the caller works on);
    None when it cannot be started at all. :func:`wait_ready` before its first client."""
    try:
        # A session of its own, as every shim the harness spawns: a terminal's Ctrl-C goes to
        # the harness, which ends its runs in hand, not to the children in the middle of them.
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env, cwd=cwd, start_new_session=True)
    except OSError:
        return None


def wait_ready(server: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Whether the launched ``server`` serves, waiting up to ``timeout_s`` for its ready line;
    one that does not is stopped."""
    assert server.stdout is not None
    readable, _, _ = select.select([server.stdout], [], [], timeout_s)
    if readable and server.stdout.readline() == READY_LINE:
        return True
    stop(server)
    return False


def stop(server: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
    """EOF on its stdin (it kills and reaps its children, then exits), then reap it; SIGKILL
    if it hangs."""
    with contextlib.suppress(OSError):
        if server.stdin is not None:
            server.stdin.close()
    try:
        server.wait(timeout_s)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    if server.stdout is not None:
        server.stdout.close()


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One client's request line and its three descriptors."""
    fds = array.array("i")
    chunks: list[bytes] = []
    while True:
        data, ancdata, _flags, _addr = conn.recvmsg(MAX_REQUEST, socket.CMSG_LEN(3 * fds.itemsize))
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
        if not data:
            break
        chunks.append(data)
        if data.endswith(b"\n"):
            break
    request = json.loads(b"".join(chunks) or b"null")
    return (request if isinstance(request, dict) else {}), list(fds)


def _child(become: Become, request: dict[str, Any], fds: list[int], name: str) -> None:
    """In the forked child: take the client's streams, environment and folder and become the
    shim; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        if isinstance(request.get("cwd"), str):
            os.chdir(request["cwd"])
        if isinstance(request.get("env"), dict):
            os.environ.clear()
            os.environ.update({str(k): str(v) for k, v in request["env"].items()})
        argv = [str(a) for a in request.get("argv") or []]
        sys.argv = argv
        code = become(argv)
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - the client must see an exit, never a server
        with contextlib.suppress(OSError):
            os.write(2, f"{name} (forked by its fork server): {exc!r}\n".encode())
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


class ForkServer:
    """The accept/fork/reap loop. Build it once everything the children share is loaded."""

    def __init__(self, socket_path: str, become: Become, *, name: str) -> None:
        self.socket_path, self.become, self.name = socket_path, become, name
        # What is loaded lives as long as any child: kept out of the children's collections.
        for_short_lived_objects()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(socket_path)
        self.listener.listen(64)
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the loop (wakeup fd)
        signal.signal(signal.SIGTERM, self._stop)
        self.stopping = False
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "wake")
        self.selector.register(0, selectors.EVENT_READ, "starter")
        self.children: dict[int, socket.socket | None] = {}  # pid -> its client's connection

    def _stop(self, *_: Any) -> None:
        self.stopping = True

    def run(self) -> None:
        os.write(1, READY_LINE)  # unbuffered: a forked child must inherit no pending output
        while not self.stopping:
            for key, _ in self.selector.select():
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_read, 4096)
                    self._reap()
                elif key.data == "starter":
                    if not os.read(0, 4096):
                        self.stopping = True
                else:
                    self._client_gone(key.fileobj, key.data)  # type: ignore[arg-type]
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        while self.children:
            pid, _status = os.waitpid(-1, 0)
            self.children.pop(pid, None)
        # The starter removes the socket's folder too, unless it was killed: then it is ours.
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)
            os.rmdir(os.path.dirname(self.socket_path))

    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            conn.close()
            return
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            self.selector.close()
            for sock in (self.listener, conn, *(c for c in self.children.values() if c is not None)):
                sock.close()
            os.close(self.wake_read)
            os.close(self.wake_write)
            _child(self.become, request, fds, self.name)
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn
        with contextlib.suppress(OSError):
            conn.sendall(STATUS.pack(pid))
        self.selector.register(conn, selectors.EVENT_READ, pid)

    def _client_gone(self, conn: socket.socket, pid: int) -> None:
        """The client closed its end (killed, or exited): its child goes too."""
        with contextlib.suppress(OSError):
            if conn.recv(1):
                return  # a client sends nothing after its request; a stray byte is ignored
        self.selector.unregister(conn)
        conn.close()
        if self.children.get(pid) is conn:
            self.children[pid] = None
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is not None:
                self.selector.unregister(conn)
                with contextlib.suppress(OSError):
                    conn.sendall(STATUS.pack(status))
                conn.close()
