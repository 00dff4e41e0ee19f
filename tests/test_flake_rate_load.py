"""benchmarks/flake_rate.py's load: the CPU-bound children it keeps running end with it, even
when it is killed by a signal and runs no cleanup (apart from ``test_flake_rate.py``, which the
own-suite benchmark test runs as its small, subprocess-free sample)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from test_flake_rate import flake_rate


def test_the_load_ends_when_the_benchmark_is_killed() -> None:
    # A parent killed by SIGKILL runs no ``finally``: the busy child must notice on its own.
    parent = subprocess.Popen(
        [sys.executable, "-c", "import os, subprocess, sys, time\n"
         f"child = subprocess.Popen([sys.executable, '-c', {flake_rate.BUSY_LOOP!r}.format(parent=os.getpid())])\n"
         "print(child.pid, flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child_pid):
        time.sleep(0.05)
    assert not _alive(child_pid), "the busy loop outlived the killed benchmark"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; only its reaping (by init) is left
