"""A warm start for mutant shims: ``python tests/mutants/shim_zygote.py SOCKET``.

A mutant shim started as ``python tests/mutants/mutant_shim.py NAME`` spends ~0.2 s of CPU
importing the reference shim, reference_py and its HTTP stack before it reads a line, and a
scoped mutant pass starts about 170 of them. This zygote imports all of that once, then
serves on a Unix socket: each connection (from ``shim_client.py``, which is what the kill
runs start as their shim) hands over the client's stdin, stdout and stderr and its argv,
environment and working folder; the zygote forks a child that applies the named mutant to
its own copy of the shim module and serves shim protocol v1 on those descriptors, exactly
as ``mutant_shim.py`` does.

Each shim is still a process of its own with its own pipes. The zygote sends the client the
child's pid, then its wait status when it ends (the client exits the same way); when a client
goes away first (the harness killed it), the zygote kills its child at once, so nothing holds
the harness's pipes open. SIGTERM ends the zygote and every child still alive, all reaped.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import mutant_shim  # noqa: E402

MAX_MESSAGE = 1 << 20  # argv, environment and folder of one client, as JSON
STATUS = struct.Struct("!i")


def preload() -> tuple[dict[str, object], object]:
    """The catalogue and a pristine reference shim module, with what its first run imports.

    Not ``reference_py.relay``: a client with relay off must run with it never imported, so
    each child imports it on its own when its mutant runs with relay (the shim's warm-up).
    """
    from catalog import load

    mutants = load()
    shim = mutant_shim.load_reference_shim()
    return mutants, shim  # type: ignore[return-value]


def receive_request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """One client's request: its JSON message and its three descriptors."""
    fds = array.array("i")
    chunks: list[bytes] = []
    while True:
        data, ancdata, _flags, _addr = conn.recvmsg(MAX_MESSAGE, socket.CMSG_LEN(3 * fds.itemsize))
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
        if not data:
            break
        chunks.append(data)
        if data.endswith(b"\n"):
            break
    return json.loads(b"".join(chunks) or b"null"), list(fds)


def serve_child(request: dict[str, object], fds: list[int], mutants: dict[str, object], shim: object) -> None:
    """In the forked child: become the mutant shim on the client's descriptors; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        argv = [str(a) for a in request["argv"]]  # type: ignore[union-attr]
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in request["env"].items()})  # type: ignore[union-attr]
        sys.argv = argv
        code = mutant_shim.serve_loaded(argv, mutants, shim)  # type: ignore[arg-type]
    except BaseException as exc:  # noqa: BLE001 - the client must see an exit, never a zygote
        with contextlib.suppress(OSError):
            os.write(2, f"mutant shim (zygote child): {exc!r}\n".encode())
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


class Zygote:
    """The accept/fork/reap loop, on one thread (forking with no other thread alive)."""

    def __init__(self, path: str) -> None:
        self.mutants, self.shim = preload()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the loop (wakeup fd)
        self.stopping = False
        signal.signal(signal.SIGTERM, self._stop)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "wake")
        self.children: dict[int, socket.socket | None] = {}  # pid -> its client's connection

    def _stop(self, *_: object) -> None:
        self.stopping = True

    def run(self) -> None:
        print("ready", flush=True)  # the starter waits for this line
        while not self.stopping:
            for key, _ in self.selector.select():
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_read, 4096)
                    self._reap()
                else:
                    self._client_gone(key.fileobj, key.data)  # type: ignore[arg-type]
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        while self.children:
            pid, _status = os.waitpid(-1, 0)
            self.children.pop(pid, None)

    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        try:
            request, fds = receive_request(conn)
        except (OSError, ValueError):
            conn.close()
            return
        if len(fds) != 3 or not isinstance(request, dict):
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self.selector.close()
            for sock in (self.listener, *(c for c in self.children.values() if c is not None)):
                sock.close()
            os.close(self.wake_read)
            os.close(self.wake_write)
            conn_fd = conn.detach()
            os.close(conn_fd)
            serve_child(request, fds, self.mutants, self.shim)
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn
        with contextlib.suppress(OSError):
            conn.sendall(STATUS.pack(pid))
        self.selector.register(conn, selectors.EVENT_READ, pid)

    def _client_gone(self, conn: socket.socket, pid: int) -> None:
        """The client closed its end (it was killed, or it exited): its shim goes too."""
        with contextlib.suppress(OSError):
            if conn.recv(1):
                return  # clients send nothing after their request; ignore a stray byte
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


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: shim_zygote.py SOCKET", file=sys.stderr)
        return 2
    Zygote(argv[1]).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
