"""A warm start for the reference shim in a differential search:
``python harness/differential_zygote.py SOCKET SHIM [--no-relay]``.

A generated scenario that resumes in a restarted shim (``restartShim``) boots a fresh
reference shim for each port, and a boot is ~0.1 s of CPU (the interpreter, asyncio,
reference_py) against ~4 ms for serving a scenario: at ~3 restarts per 100 scenarios the
boots cost a quarter of a search's CPU. This zygote imports the shim script ``SHIM`` once,
does its warm-up, then serves on the Unix socket ``SOCKET``: each connection (from
``differential_fork_client.py``, the command the search starts as the port's shim) hands
over the client's stdin, stdout and stderr; the zygote forks a child that becomes the shim
on them, exactly as ``python SHIM [--no-relay]`` would run (``main()``).

Each shim is still a fresh process of its own that has served nothing before: a restart
is still a new process, with the state of a just-booted shim. The zygote sends the client
the child's pid, then its wait status when it ends (the client exits the same way); a
client that goes away first (the harness killed it) takes its shim with it at once, so
nothing holds the harness's pipes open. EOF on the zygote's stdin (its starter is gone) or
SIGTERM ends it and every child still alive, all reaped. Standard library only, besides
the shim it loads; it runs on one thread (it forks).
"""

from __future__ import annotations

import array
import contextlib
import gc
import importlib.util
import os
import selectors
import signal
import socket
import struct
import sys
from types import ModuleType
from typing import Any

STATUS = struct.Struct("!i")  # the child's pid, then its wait status, to the client
MAX_REQUEST = 4096
# A shim allocates a few thousand short-lived objects per scenario: collecting the youngest
# generation every 700 allocations spends CPU on objects that die young anyway.
YOUNG_GC_THRESHOLD = 50_000


def load_shim(path: str, args: list[str]) -> ModuleType:
    """The shim script as a module, warmed up as its ``serve`` would before the first request."""
    spec = importlib.util.spec_from_file_location("differential_warm_shim", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the shim script {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module._warm_up(relay="--no-relay" not in args)
    return module


def become_shim(shim: ModuleType, path: str, args: list[str], fds: list[int]) -> None:
    """In the forked child: serve the shim protocol on the client's descriptors; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        sys.argv = [path, *args]
        shim.main()  # ends with os._exit once shutdown is answered
        code = 0
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - the client must see an exit, never a zygote
        with contextlib.suppress(OSError):
            os.write(2, f"reference shim (forked by the differential zygote): {exc!r}\n".encode())
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def receive_fds(conn: socket.socket) -> list[int]:
    """The three descriptors a client sends with its one-byte request."""
    fds = array.array("i")
    _data, ancdata, _flags, _addr = conn.recvmsg(MAX_REQUEST, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    return list(fds)


class Zygote:
    """The accept/fork/reap loop."""

    def __init__(self, socket_path: str, shim_path: str, args: list[str]) -> None:
        self.socket_path, self.shim_path, self.args = socket_path, shim_path, args
        self.shim = load_shim(shim_path, args)
        # What the shim imported lives as long as any child: kept out of the children's
        # collections (which would also touch, so copy, every page of it).
        gc.freeze()
        gc.set_threshold(YOUNG_GC_THRESHOLD, *gc.get_threshold()[1:])
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
        os.write(1, b"ready\n")  # unbuffered: a forked child must inherit no pending output
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
            fds = receive_fds(conn)
        except OSError:
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
            become_shim(self.shim, self.shim_path, self.args, fds)
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn
        with contextlib.suppress(OSError):
            conn.sendall(STATUS.pack(pid))
        self.selector.register(conn, selectors.EVENT_READ, pid)

    def _client_gone(self, conn: socket.socket, pid: int) -> None:
        """The client closed its end (killed, or exited): its shim goes too."""
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


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: differential_zygote.py SOCKET SHIM [shim arguments]", file=sys.stderr)
        return 2
    Zygote(argv[1], argv[2], argv[3:]).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
