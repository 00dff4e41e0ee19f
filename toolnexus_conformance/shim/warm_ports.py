"""Warm starts for a differential search's reference shims (shim/zygote.py).

:func:`warm_port` gives a worker the port it must start its shims with: for the reference
shim (``{python} shims/reference/shim.py [--no-relay]``, the ports ``reference`` and
``reference-norelay``) a zygote is started once, and the port's command becomes a small
client that has the zygote fork a fresh shim onto the client's pipes; any other port (a
build, a ``--port-cmd``, a mutant) is returned unchanged and boots as usual. The shims are
the same program in the same state (a fresh process that has served nothing); only the
interpreter's start-up and the imports are paid once per search instead of once per shim,
which matters for the scenarios that resume in a restarted shim. The differential's own
sessions skip the client process too: they have the zygote fork straight onto their pipes
(shim/forked.py), and start the client command only when it cannot be reached.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path

from toolnexus_conformance.shim import fork_server
from toolnexus_conformance.shim.ports import ResolvedPort

HERE = Path(__file__).resolve().parent
ZYGOTE = HERE / "zygote.py"
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


def zygote_command(argv: list[str], folder: str) -> tuple[list[str], str] | None:
    """The command of a zygote for the reference shim ``argv``, serving a socket in ``folder``,
    and that socket's path; None when ``argv`` is not the reference shim."""
    shim = reference_shim(argv)
    if shim is None:
        return None
    socket_path = os.path.join(folder, "zygote.sock")
    return [argv[0], str(ZYGOTE), socket_path, shim, *argv[2:]], socket_path


def warm_port(port: ResolvedPort, stack: ExitStack) -> ResolvedPort:
    """``port`` with its shims forked from a zygote that ``stack`` stops, when it is the
    reference shim and the zygote comes up; otherwise ``port`` itself (cold starts: a zygote
    that cannot start changes the speed only, and a shim that cannot start either is
    reported by its own start, as always)."""
    return warm_ports([port], stack)[0]


def warm_ports(ports: Sequence[ResolvedPort], stack: ExitStack,
               meanwhile: Callable[[], object] | None = None) -> list[ResolvedPort]:
    """Each of ``ports`` as :func:`warm_port` makes it, their zygotes booting side by side
    (the start of every search); ``meanwhile`` runs while they boot."""
    launched = [_launch(port, stack) for port in ports]
    if meanwhile is not None:
        meanwhile()
    return [port if started is None else _when_ready(port, *started, stack) for port, started in zip(ports, launched, strict=True)]


def _launch(port: ResolvedPort, stack: ExitStack) -> tuple[subprocess.Popen[bytes], str] | None:
    """The zygote of ``port`` started (not yet serving) and its socket; None for any other
    port, or when the zygote cannot be started at all."""
    if reference_shim(port.argv) is None:
        return None
    folder = tempfile.mkdtemp(prefix="tn-differential-")
    stack.callback(shutil.rmtree, folder, ignore_errors=True)
    command = zygote_command(port.argv, folder)
    assert command is not None  # the reference shim, checked above
    argv, socket_path = command
    zygote = fork_server.launch(argv, env={**os.environ, **port.env})
    return None if zygote is None else (zygote, socket_path)


def _when_ready(port: ResolvedPort, zygote: subprocess.Popen[bytes], socket_path: str, stack: ExitStack) -> ResolvedPort:
    if not fork_server.wait_ready(zygote, READY_TIMEOUT_S):
        return port  # stopped by wait_ready
    stack.callback(fork_server.stop, zygote, STOP_TIMEOUT_S)
    return dataclasses.replace(port, argv=fork_server.client_command(port.argv[0], socket_path))
