"""The mutant shims' zygote for a pass of kill runs: started, waited for, stopped and reaped.

``warm_shims()`` starts ``shim_zygote.py`` on a private Unix socket and yields the command a
kill run starts its shim with (``shim_client.py`` before the mutant's name); on exit it
stops the zygote (which kills and reaps any shim still alive) and reaps it, so `time` and
``benchmarks/own_suite.py`` count the shims' CPU. A zygote that does not come up leaves the
runs on the cold command (``kill_runner.cold_shim``), said on stderr: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import select
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kill_runner import ROOT, cold_shim

HERE = Path(__file__).resolve().parent
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


def client_command(socket_path: Path, python: str = sys.executable) -> str:
    """The shim command (before the mutant's name) that asks the zygote at ``socket_path``."""
    return shlex.join([python, "-I", "-S", str(HERE / "shim_client.py"), str(socket_path)])


def _ready(zygote: subprocess.Popen[str], timeout_s: float) -> bool:
    assert zygote.stdout is not None
    readable, _, _ = select.select([zygote.stdout], [], [], timeout_s)
    return bool(readable) and zygote.stdout.readline().strip() == "ready"


def stop(zygote: subprocess.Popen[str]) -> None:
    """SIGTERM (the zygote kills and reaps its shims), then reap it; SIGKILL if it hangs."""
    if zygote.poll() is None:
        zygote.terminate()
        try:
            zygote.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            zygote.kill()
            zygote.wait()
    if zygote.stdout is not None:
        zygote.stdout.close()


@contextlib.contextmanager
def warm_shims() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="mz-") as folder:
        socket_path = Path(folder) / "zygote.sock"
        zygote = subprocess.Popen(
            [sys.executable, str(HERE / "shim_zygote.py"), str(socket_path)],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            if _ready(zygote, START_TIMEOUT_S):
                yield client_command(socket_path)
            else:
                print("mutant shim zygote did not start: the kill runs start cold shims", file=sys.stderr)
                yield cold_shim()
        finally:
            stop(zygote)
