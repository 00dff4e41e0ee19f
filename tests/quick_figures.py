"""One ``benchmarks/all_figures.py --quick`` run per test run, shared by every test that reads
one of its steps (``build_once``: whichever xdist worker asks first runs it, the others read
its output). Its steps are smoke runs of the benchmark scripts: ``suite_floor.py --only
susp-waitfor-raises --calls 5``, ``differential_throughput.py --examples 4`` and
``own_suite.py --top 3 --workers 0 tests/test_flake_rate.py`` (no xdist worker: the script and its output are what is checked); a test that only needs one of
them to run reads it here instead of starting the script again. The fixture itself is
``all_figures_quick`` in tests/conftest.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from build_once import build_once

ROOT = Path(__file__).resolve().parents[1]
QUICK_RUN_TIMEOUT_S = 900


@dataclass(frozen=True)
class Step:
    output: str  # what the step printed, under its "=== name:" heading
    ok: bool  # its line of the closing summary ends with "ok" (exit status 0)


@dataclass(frozen=True)
class QuickRun:
    code: int
    output: str

    def step(self, name: str) -> Step:
        sections = self.output.split("\n=== ")
        body = next((part for part in sections if part.startswith(f"{name}: ")), None)
        assert body is not None, f"all_figures.py --quick ran no step {name!r}:\n{self.output[-3000:]}"
        summary = self.output.split("=== summary", 1)[-1]
        lines = {line.split(" wall ")[0].strip(): line for line in summary.splitlines() if " wall " in line}
        assert name in lines, f"all_figures.py --quick's summary has no line for {name!r}:\n{summary}"
        return Step(body, lines[name].endswith("ok"))


def _run(folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/all_figures.py", "--quick"],
        cwd=ROOT, capture_output=True, text=True, timeout=QUICK_RUN_TIMEOUT_S,
    )
    (folder / "run.json").write_text(json.dumps({"code": done.returncode, "output": done.stdout + done.stderr}), encoding="utf-8")


def quick_run(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    """This test run's quick run: made by the first caller, read by the others."""
    raw = json.loads((build_once(tmp_path_factory, "all-figures-quick", _run) / "run.json").read_text(encoding="utf-8"))
    return QuickRun(raw["code"], raw["output"])
