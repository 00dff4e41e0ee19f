"""Driving the plugin end to end in a subprocess, as a user would."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "fixtures" / "scenarios" / "relay-single-durable.json"


@dataclass
class Run:
    code: int
    output: str


def run_pytest(*args: str, cwd: Path = REPO, timeout: float = 180) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(done.returncode, done.stdout + done.stderr)
