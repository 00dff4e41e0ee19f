"""This repository's wheel, built once per test run (``build_once``) for every test that
installs the harness as a port's repository would: the CI gate end to end
(tests/gates/test_ci_gate_end_to_end.py) and the rerun hint from a port repository (tests/plugin).

It is built from a clean copy of the sources the wheel is made of, so a stale ``build/``
folder, an egg-info or compiled files in the checkout never leak into it. pip builds it in an
isolated environment it first installs the build backend into (seconds of CPU), so the wheel is
kept in the harness's build cache (``toolnexus_conformance.shim.ports.cache_dir()``, as for ports' builds) under
the digest of that clean copy — every file's path and bytes, and the Python version: a run
whose sources are byte for byte those of an earlier run installs the wheel pip built from
them then; any change to a source file builds a new one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from build_once import build_once

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "toolnexus_conformance", "reference_py", "schemas", "fixtures", "shims")
NOT_SOURCE = shutil.ignore_patterns("__pycache__", "target", "*.egg-info", "build", "dist", ".pytest_cache", ".hypothesis")
BUILD_TIMEOUT_S = 600


@dataclass(frozen=True)
class WheelBuild:
    """The built wheel, or why pip could not build it (each test decides what that means)."""

    wheel: Path | None
    error: str = ""


def wheel_cache() -> Path:
    """Where built wheels are kept: the harness's build cache (``toolnexus_conformance.shim.ports.cache_dir``)
    of this checkout, whatever folder the asking test runs in."""
    cache = os.environ.get("TOOLNEXUS_CONFORMANCE_CACHE")
    return (Path(cache).resolve() if cache else REPO / ".cache" / "conformance") / "harness-wheel"


def source_digest(source: Path) -> str:
    """The digest of a clean copy of the sources: every file's path and bytes, and the
    Python version the wheel is built with."""
    digest = hashlib.sha256(sys.version.encode())
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def _build(folder: Path) -> None:
    source = folder / "source"
    source.mkdir()
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=NOT_SOURCE)
        else:
            shutil.copy(origin, source / name)
    kept = wheel_cache() / source_digest(source)
    dist = folder / "dist"
    if (kept_wheels := sorted(kept.glob("toolnexus_conformance-*.whl"))):
        dist.mkdir()
        shutil.copy(kept_wheels[0], dist / kept_wheels[0].name)
        (folder / "pip-wheel.log").write_text(f"kept from an earlier build of the same sources: {kept_wheels[0].name}\n", encoding="utf-8")
        return
    _pip_wheel(source, folder)
    built = sorted(dist.glob("toolnexus_conformance-*.whl"))
    if len(built) == 1:
        kept.mkdir(parents=True, exist_ok=True)
        partial = kept / f".{built[0].name}.{os.getpid()}"
        shutil.copy(built[0], partial)
        partial.replace(kept / built[0].name)  # whole or absent, for a concurrent run
        for older in wheel_cache().iterdir():  # only the wheel of the current sources is kept
            if older != kept:
                shutil.rmtree(older, ignore_errors=True)


def _pip_wheel(source: Path, folder: Path) -> None:
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
