"""Build step of the python port: a private venv holding the pinned ``toolnexus`` package.

``python python_venv.py --venv DIR --requirements FILE`` creates DIR as a venv with exactly
the requirements of FILE installed from the package index, so the harness's own environment
never needs the port. A stamp file inside DIR remembers the requirements it was built
from; an unchanged FILE makes the step a no-op, a changed one rebuilds the venv from
scratch. Failures print one line naming the command that failed and exit non-zero.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

STAMP = ".conformance-requirements"


class BuildError(Exception):
    """A build command failed; the message names it."""


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def requirements_digest(requirements: Path) -> str:
    lines = [line.strip() for line in requirements.read_text(encoding="utf-8").splitlines()]
    wanted = "\n".join(line for line in lines if line and not line.startswith("#"))
    return hashlib.sha256(wanted.encode("utf-8")).hexdigest()


def is_current(venv: Path, digest: str) -> bool:
    stamp = venv / STAMP
    return venv_python(venv).exists() and stamp.exists() and stamp.read_text(encoding="utf-8").strip() == digest


def _run(argv: list[str]) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True)
    except OSError as exc:
        raise BuildError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
        raise BuildError(f"exit {done.returncode}: {' '.join(argv)}\n" + "\n".join(f"  | {t}" for t in tail))


def build(venv: Path, requirements: Path, interpreter: str = sys.executable) -> bool:
    """Make ``venv`` current; returns True when it had to (re)build."""
    if not requirements.is_file():
        raise BuildError(f"no requirements file at {requirements}")
    digest = requirements_digest(requirements)
    if is_current(venv, digest):
        return False
    if venv.exists():
        shutil.rmtree(venv)
    _run([interpreter, "-m", "venv", str(venv)])
    _run([str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(requirements)])
    (venv / STAMP).write_text(digest + "\n", encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", required=True, type=Path)
    parser.add_argument("--requirements", required=True, type=Path)
    args = parser.parse_args(argv)
    try:
        rebuilt = build(args.venv.resolve(), args.requirements.resolve())
    except BuildError as exc:
        print(f"python_venv: {exc}", file=sys.stderr)
        return 1
    print(f"python_venv: {'built' if rebuilt else 'up to date'}: {args.venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
