"""Running ``pytest --port=A --resume-port=B`` as a user would: in this process through
pytester (the plugin is what is under test, not the interpreter's start), or in a subprocess
where the thing under test needs one (xdist's ``-n``, refused in a cross run)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "fixtures" / "scenarios"


@dataclass
class Run:
    code: int
    output: str


# The inner run is the plugin itself: no xdist, no cache, no hypothesis, and no
# pytest-timeout (its SIGALRM would replace, then cancel, the outer test's own), so the
# repository's `timeout` ini key is left without its plugin.
INNER = ["-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:timeout", "-p", "no:hypothesispytest",
         "-W", "ignore::pytest.PytestConfigWarning"]


class InProcess:
    """``run_pytest`` from the repository root, in this process: the same ``Run`` back."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self._pytester = pytester
        monkeypatch.chdir(REPO)

    def __call__(self, *args: str) -> Run:
        result = self._pytester.runpytest_inprocess(*INNER, *args)
        return Run(int(result.ret), result.stdout.str() + result.stderr.str())


def run_pytest(*args: str, timeout: float = 300) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(done.returncode, done.stdout + done.stderr)


def scenario(name: str) -> str:
    return str(SCENARIOS / f"{name}.json")


def mutant_cmd(name: str) -> str:
    return shlex.join([sys.executable, str(REPO / "tests" / "mutants" / "mutant_shim.py"), name])


def reference_cmd() -> str:
    """The reference shim under another name: a faithful port the harness does not know is the oracle."""
    return shlex.join([sys.executable, str(REPO / "shims" / "reference" / "shim.py")])


def no_resume_cmd() -> str:
    return shlex.join([sys.executable, str(Path(__file__).with_name("no_resume_shim.py"))])


def read_report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
