"""This repository's wheel, built once per test run (``build_once``) for every test that
installs the harness as a port's repository would: the CI gate end to end
(tests/gates/test_ci_gate_end_to_end.py) and the rerun hint from a port repository (tests/plugin).

It is built from a clean copy of the sources the wheel is made of, so a stale ``build/``
folder, an egg-info or compiled files in the checkout never leak into it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from build_once import build_once

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "harness", "reference_py", "schemas", "fixtures", "shims")
NOT_SOURCE = shutil.ignore_patterns("__pycache__", "target", "*.egg-info", "build", "dist", ".pytest_cache", ".hypothesis")
BUILD_TIMEOUT_S = 600


@dataclass(frozen=True)
class WheelBuild:
    """The built wheel, or why pip could not build it (each test decides what that means)."""

    wheel: Path | None
    error: str = ""


def _build(folder: Path) -> None:
    source = folder / "source"
    source.mkdir()
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=NOT_SOURCE)
        else:
            shutil.copy(origin, source / name)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(folder / "dist"), str(source)],
        check=False, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
    )  # fmt: skip
    # Kept for every caller: a test that needs the wheel fails on it, one that can do
    # without the package index skips on it.
    (folder / "pip-wheel.log").write_text(f"exit {done.returncode}\n{done.stdout}{done.stderr}", encoding="utf-8")


def harness_wheel(tmp_path_factory: pytest.TempPathFactory) -> WheelBuild:
    folder = build_once(tmp_path_factory, "harness-wheel", _build)
    wheels = sorted((folder / "dist").glob("toolnexus_conformance-*.whl"))
    if len(wheels) != 1:
        return WheelBuild(None, (folder / "pip-wheel.log").read_text(encoding="utf-8")[-1500:])
    return WheelBuild(wheels[0])
