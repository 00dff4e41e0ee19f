"""A reference shim forked from the differential zygote: ``python -I -S differential_fork_client.py SOCKET``.

What a differential search starts as a reference port's shim while a zygote
(``differential_zygote.py``) is up for that port. It hands its stdin, stdout and stderr to
the zygote, which forks the shim onto them; then it closes its own copies (so only the shim
holds the harness's pipes), waits for the shim's wait status and ends the same way: the
same exit code, or killed by the same signal. Killed itself, it leaves the zygote to kill
the shim (its connection closes). Standard library only and run without ``site``: it costs
~15 ms of CPU where a cold reference shim costs ~100 ms.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import sys

STATUS = struct.Struct("!i")


def receive_int(conn: socket.socket) -> int | None:
    data = b""
    while len(data) < STATUS.size:
        chunk = conn.recv(STATUS.size - len(data))
        if not chunk:
            return None
        data += chunk
    return int(STATUS.unpack(data)[0])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: differential_fork_client.py SOCKET", file=sys.stderr)
        return 2
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(argv[1])
        socket.send_fds(conn, [b"\n"], [0, 1, 2])
    except OSError as exc:
        print(f"differential shim client: cannot reach the zygote at {argv[1]}: {exc}", file=sys.stderr)
        return 1
    if receive_int(conn) is None:
        print("differential shim client: the zygote closed the connection before forking", file=sys.stderr)
        return 1
    # The shim holds the pipes now: ours must not keep the harness waiting for an EOF.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    status = receive_int(conn)
    if status is None:
        return 1
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP take no handler
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
