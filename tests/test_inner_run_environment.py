"""What the processes a test starts inherit from tests/conftest.py's session fixtures: the
same summaries as on a developer's machine (no CI variables) and Python's default bytecode
caching, whatever the host sets."""

from __future__ import annotations

import subprocess
import sys

PROBE = "import os, sys; print(sys.flags.dont_write_bytecode, 'CI' in os.environ, 'BUILD_NUMBER' in os.environ)"


def test_an_inner_python_caches_bytecode_and_sees_no_ci_host() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    dont_write, ci, build_number = done.stdout.split()
    assert dont_write == "0", "an inner Python compiles every module from source again (PYTHONDONTWRITEBYTECODE reached it)"
    assert (ci, build_number) == ("False", "False"), "an inner pytest would print CI-style summaries"
