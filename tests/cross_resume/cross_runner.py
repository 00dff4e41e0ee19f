"""Running ``pytest --port=A --resume-port=B`` as a user would, in this process through
pytester (the plugin is what is under test, not the interpreter's start)."""

from __future__ import annotations

import json
import shlex
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
KEEPING_XDIST = ["-p", "no:cacheprovider", "-p", "no:timeout", "-p", "no:hypothesispytest",
                 "-W", "ignore::pytest.PytestConfigWarning"]
INNER = ["-p", "no:xdist", *KEEPING_XDIST]


class InProcess:
    """``pytest ARGS`` from the repository root, in this process: its exit code and output."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self._pytester = pytester
        monkeypatch.chdir(REPO)

    def __call__(self, *args: str, keep_xdist: bool = False) -> Run:
        """``keep_xdist``: xdist stays loaded, for a run whose -n is what is under test (one
        that must never reach its session start: xdist would start workers there)."""
        result = self._pytester.runpytest_inprocess(*(KEEPING_XDIST if keep_xdist else INNER), *args)
        return Run(int(result.ret), result.stdout.str() + result.stderr.str())


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
