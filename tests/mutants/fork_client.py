"""A process forked by a fork server: ``python -I -S tests/mutants/fork_client.py SOCKET [ARG...]``.

What a mutant kill run starts as its shim (``--port-cmd``, a plain subprocess to the harness)
while the mutants' zygote (``shim_zygote.py`` on ``toolnexus_conformance/shim/fork_server.py``)
is up. It hands
its stdin, stdout and stderr, its arguments, environment and working folder to the server,
which forks the child onto them; then it closes its own copies (so only the child holds the
harness's pipes), waits for the child's wait status and ends the same way: the same exit
code, or killed by the same signal. Killed itself, it leaves the server to kill the child
(its connection closes).

It is started once per shim, so its start-up is what it costs: run without ``site``, on the
C module ``_socket`` rather than ``socket`` (and ``signal`` only when the child was killed
by one), whose Python layers build enums at import: about a bare ``python -I -S`` start,
a small part of what a cold Python shim's imports cost.
"""

from __future__ import annotations

import _socket
import json
import os
import sys

STATUS_SIZE = 4  # a signed 32-bit int in network order: the child's pid, then its wait status


def receive_int(conn: _socket.socket) -> int | None:
    data = b""
    while len(data) < STATUS_SIZE:
        chunk = conn.recv(STATUS_SIZE - len(data))
        if not chunk:
            return None
        data += chunk
    return int.from_bytes(data, "big", signed=True)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: fork_client.py SOCKET [ARG...]", file=sys.stderr)
        return 2
    request = json.dumps({"argv": argv[2:], "env": dict(os.environ), "cwd": os.getcwd()}).encode() + b"\n"
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(argv[1])
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # C ints, as SCM_RIGHTS wants them
        conn.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    except OSError as exc:
        print(f"fork client: cannot reach the fork server at {argv[1]}: {exc}", file=sys.stderr)
        return 1
    if receive_int(conn) is None:
        print("fork client: the fork server closed the connection before forking", file=sys.stderr)
        return 1
    # The child holds the pipes now: ours must not keep the harness waiting for an EOF.
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
