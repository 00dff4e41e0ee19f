"""The mutant shims' zygote for a pass of kill runs: started, waited for, stopped and reaped.

``warm_shims()`` starts ``shim_zygote.py`` on a private Unix socket and yields the command a
kill run starts its shim with (fork_client.py beside this module, before the mutant's name); on exit it
stops the zygote (which kills and reaps any shim still alive) and reaps it, so `time` and
``benchmarks/own_suite.py`` count the shims' CPU. A zygote that does not come up leaves the
runs on the cold command (``kill_runner.cold_shim``), said on stderr: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kill_runner import ROOT, cold_shim

from toolnexus_conformance.shim import fork_server

HERE = Path(__file__).resolve().parent
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


def client_command(socket_path: Path, python: str = sys.executable) -> str:
    """The shim command (before the mutant's name) that asks the zygote at ``socket_path``:
    the fork client (``fork_client.py``), run without ``site`` for a quick start."""
    return shlex.join([python, "-I", "-S", str(HERE / "fork_client.py"), str(socket_path)])


@contextlib.contextmanager
def warm_shims() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="mz-") as folder:
        socket_path = Path(folder) / "zygote.sock"
        zygote = fork_server.start([sys.executable, str(HERE / "shim_zygote.py"), str(socket_path)],
                                   cwd=ROOT, ready_timeout_s=START_TIMEOUT_S)
        if zygote is None:
            print("mutant shim zygote did not start: the kill runs start cold shims", file=sys.stderr)
            yield cold_shim()
            return
        try:
            yield client_command(socket_path)
        finally:
            fork_server.stop(zygote, STOP_TIMEOUT_S)
