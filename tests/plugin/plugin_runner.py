"""Driving the plugin end to end in a subprocess, as a user would."""

from __future__ import annotations

import os
import shutil
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


def run_pytest(
    *args: str, cwd: Path = REPO, timeout: float = 180, fixtures: Path | None = None, env_extra: dict[str, str] | None = None
) -> Run:
    env = {**os.environ, **(env_extra or {})}
    if fixtures is not None:
        env["TOOLNEXUS_CONFORMANCE_FIXTURES"] = str(fixtures)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(done.returncode, done.stdout + done.stderr)


def private_fixtures(tmp_path: Path, scenario_id: str) -> Path:
    """A copy of the fixtures tree holding one scenario and its goldens, safe to edit."""
    source = REPO / "fixtures"
    target = tmp_path / "fixtures"
    (target / "scenarios").mkdir(parents=True)
    for name in ("rules.json", "normalization.json"):
        shutil.copy(source / name, target / name)
    shutil.copy(source / "scenarios" / f"{scenario_id}.json", target / "scenarios")
    shutil.copytree(source / "golden" / scenario_id, target / "golden" / scenario_id)
    return target


def add_scenario(fixtures: Path, scenario_id: str) -> None:
    """Copy one more scenario and its goldens into a private fixtures tree."""
    shutil.copy(REPO / "fixtures" / "scenarios" / f"{scenario_id}.json", fixtures / "scenarios")
    shutil.copytree(REPO / "fixtures" / "golden" / scenario_id, fixtures / "golden" / scenario_id)


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes: to prove a run lost or changed nothing."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
