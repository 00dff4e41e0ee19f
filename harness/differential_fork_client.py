"""A reference shim forked from the differential zygote: ``python -I -S differential_fork_client.py SOCKET``.

What a differential search starts as a reference port's shim while a zygote
(``differential_zygote.py``) is up for that port. It hands its stdin, stdout and stderr to
the zygote, which forks the shim onto them; then it closes its own copies (so only the shim
holds the harness's pipes), waits for the shim's wait status and ends the same way: the
same exit code, or killed by the same signal. Killed itself, it leaves the zygote to kill
the shim (its connection closes).

It is started once per shim, so its start-up is what it costs: run without ``site``, and
on the C module ``_socket`` rather than ``socket`` (and ``signal`` only when the shim was
killed by one): their Python layers build enums at import, ~18 ms of CPU of a ~30 ms start;
the client now costs about a bare ``python -I -S`` start, against ~100 ms for a cold
reference shim.
"""

from __future__ import annotations

import _socket
import os
import sys

STATUS_SIZE = 4  # a signed 32-bit int in network order: the shim's pid, then its wait status


def receive_int(conn: _socket.socket) -> int | None:
    data = b""
    while len(data) < STATUS_SIZE:
        chunk = conn.recv(STATUS_SIZE - len(data))
        if not chunk:
            return None
        data += chunk
    return int.from_bytes(data, "big", signed=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: differential_fork_client.py SOCKET", file=sys.stderr)
        return 2
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(argv[1])
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # C ints, as SCM_RIGHTS wants them
        conn.sendmsg([b"\n"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
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
        import signal  # only here: its import builds enums (see the module docstring)

        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL and SIGSTOP take no handler
            pass
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
