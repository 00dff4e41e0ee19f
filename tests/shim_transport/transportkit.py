"""The shim transport tests' tools: the faux shim's command line and the reaping check.

(A module of its own, not conftest.py: ``conftest`` is one module name for every folder's
conftest, so ``from conftest import`` depends on collection order.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

FAUX_SHIM = Path(__file__).with_name("faux_shim.py")
CALL_TIMEOUT = 2.0  # generous for a loaded CI box, short enough to keep the suite fast


def faux_command(mode: str, once: Path | None = None) -> list[str]:
    argv = [sys.executable, str(FAUX_SHIM), mode]
    return argv + ["--once", str(once)] if once is not None else argv


def assert_reaped(pid: int) -> None:
    """The child is gone and was waited for: no zombie is left behind."""
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
