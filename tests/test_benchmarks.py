"""The benchmark scripts still run (they print figures; nothing here asserts a speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_scenario_throughput_runs_both_paths() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/scenario_throughput.py", "--rounds", "1", "--only", "susp-waitfor-raises"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "reference shim (subprocess)" in done.stdout and "in-process / shim ratio" in done.stdout


def test_fake_provider_latency_runs() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/fake_provider_latency.py", "--requests", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "nodelay=on" in done.stdout and "nodelay=off" in done.stdout
