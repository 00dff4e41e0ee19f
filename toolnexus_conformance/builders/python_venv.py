"""Build step of the python port: a private venv holding the pinned ``toolnexus`` package.

``python -m toolnexus_conformance.builders.python_venv --venv DIR --requirements FILE`` creates DIR as a
venv with exactly the requirements of FILE installed from the package index, so the
harness's own environment never needs the port. A stamp file inside DIR remembers the
requirements it was built from; an unchanged FILE makes the step a no-op, a changed one
rebuilds the venv from scratch. ``--source DIR`` instead installs the repository under
test (a pip-installable ``toolnexus``, what ``--port=python --port-src=DIR`` runs): the
venv is rebuilt every time, since the source may change under the same version. Failures
print the command that failed with its output tail and exit non-zero.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
from pathlib import Path

from .common import BuildError, cli, run_command

STAMP = ".conformance-requirements"


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def requirements_digest(requirements: Path) -> str:
    lines = [line.strip() for line in requirements.read_text(encoding="utf-8").splitlines()]
    wanted = "\n".join(line for line in lines if line and not line.startswith("#"))
    return hashlib.sha256(wanted.encode("utf-8")).hexdigest()


def is_current(venv: Path, digest: str) -> bool:
    stamp = venv / STAMP
    return venv_python(venv).exists() and stamp.exists() and stamp.read_text(encoding="utf-8").strip() == digest


def build(venv: Path, requirements: Path, interpreter: str = sys.executable) -> bool:
    """Make ``venv`` current; returns True when it had to (re)build."""
    if not requirements.is_file():
        raise BuildError(f"no requirements file at {requirements}")
    digest = requirements_digest(requirements)
    if is_current(venv, digest):
        return False
    if venv.exists():
        shutil.rmtree(venv)
    run_command([interpreter, "-m", "venv", str(venv)])
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run_command([*pip, "-r", str(requirements)])
    (venv / STAMP).write_text(digest + "\n", encoding="utf-8")
    return True


def build_from_source(venv: Path, source: Path, interpreter: str = sys.executable) -> None:
    """A fresh ``venv`` holding the package of the checkout ``source``: the folder itself when
    it is a Python project, else its ``python/`` folder (a whole toolnexus checkout)."""
    if not source.is_dir():
        raise BuildError(f"--port-src={source}: no such folder")
    if not _is_project(source):
        if not _is_project(source / "python"):
            raise BuildError(
                f"--port-src={source}: neither it nor its python/ folder is a Python project "
                "(no pyproject.toml or setup.py): give the python port's folder or a toolnexus checkout that has it"
            )
        source = source / "python"
    if venv.exists():
        shutil.rmtree(venv)
    run_command([interpreter, "-m", "venv", str(venv)])
    run_command([str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)])


def _is_project(folder: Path) -> bool:
    return (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file()


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--venv", required=True, type=Path)
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--requirements", type=Path)
    given.add_argument("--source", type=Path)


def _build(args: argparse.Namespace) -> str:
    if args.source is not None:
        build_from_source(args.venv.resolve(), args.source.resolve())
        return f"installed {args.source} into {args.venv}"
    rebuilt = build(args.venv.resolve(), args.requirements.resolve())
    return f"{'built' if rebuilt else 'up to date'}: {args.venv}"


def main(argv: list[str] | None = None) -> int:
    return cli("python_venv", __doc__.splitlines()[0], _arguments, _build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
