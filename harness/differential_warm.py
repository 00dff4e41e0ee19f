"""Warm starts for a differential search's reference shims (differential_zygote.py).

:func:`warm_port` gives a worker the port it must start its shims with: for the reference
shim (``{python} shims/reference/shim.py [--no-relay]``, the ports ``reference`` and
``reference-norelay``) a zygote is started once, and the port's command becomes a small
client that has the zygote fork a fresh shim onto the client's pipes; any other port (a
build, a ``--port-cmd``, a mutant) is returned unchanged and boots as usual. The shims are
the same program in the same state (a fresh process that has served nothing); only the
interpreter's start-up and the imports are paid once per search instead of once per shim,
which matters for the scenarios that resume in a restarted shim.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import select
import shutil
import subprocess
import tempfile
from contextlib import ExitStack
from pathlib import Path

from .ports import ResolvedPort

HERE = Path(__file__).resolve().parent
ZYGOTE = HERE / "differential_zygote.py"
CLIENT = HERE / "differential_fork_client.py"
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
SHIM_FLAGS = frozenset({"--no-relay"})


def reference_shim(argv: list[str]) -> str | None:
    """The shim script when ``argv`` runs the reference shim with a Python interpreter, else None."""
    if len(argv) < 2 or not Path(argv[0]).name.startswith("python"):
        return None
    if Path(argv[1]).parts[-3:] != ("shims", "reference", "shim.py") or not set(argv[2:]) <= SHIM_FLAGS:
        return None
    return argv[1]


def warm_port(port: ResolvedPort, stack: ExitStack) -> ResolvedPort:
    """``port`` with its shims forked from a zygote that ``stack`` stops, when it is the
    reference shim and the zygote comes up; otherwise ``port`` itself (cold starts: a zygote
    that cannot start changes the speed only, and a shim that cannot start either is
    reported by its own start, as always)."""
    shim = reference_shim(port.argv)
    if shim is None:
        return port
    folder = tempfile.mkdtemp(prefix="tn-differential-")
    stack.callback(shutil.rmtree, folder, ignore_errors=True)
    socket_path = os.path.join(folder, "zygote.sock")
    env = {**os.environ, **port.env}
    try:
        # A session of its own, as every shim the harness spawns: a terminal's Ctrl-C goes to
        # the search, which ends its runs in hand, not to the shims in the middle of them.
        zygote = subprocess.Popen([port.argv[0], str(ZYGOTE), socket_path, shim, *port.argv[2:]],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                  start_new_session=True)
    except OSError:
        return port
    stack.callback(_stop, zygote)
    if not _ready(zygote):
        return port
    return dataclasses.replace(port, argv=[port.argv[0], "-I", "-S", str(CLIENT), socket_path])


def _ready(zygote: subprocess.Popen[bytes]) -> bool:
    assert zygote.stdout is not None
    readable, _, _ = select.select([zygote.stdout], [], [], READY_TIMEOUT_S)
    return bool(readable) and zygote.stdout.readline() == b"ready\n"


def _stop(zygote: subprocess.Popen[bytes]) -> None:
    """EOF on its stdin: the zygote kills and reaps the shims still alive, then exits."""
    with contextlib.suppress(OSError):
        if zygote.stdin is not None:
            zygote.stdin.close()
    try:
        zygote.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        zygote.kill()
        zygote.wait()
    if zygote.stdout is not None:
        zygote.stdout.close()
