"""Builds a test run makes once, whatever the number of its xdist workers.

Building this repository's wheel or a venv from the package index costs seconds of CPU, and
under ``pytest -n auto`` every worker that runs a test needing one used to build its own.
``build_once(tmp_path_factory, NAME, build)`` gives every caller of one test run the same
folder: the first caller builds into it, holding an exclusive lock (``fcntl.flock``) on a
file beside it, and the others wait for that lock, then reuse the result. What the build
ended with is recorded beside the folder, so a later caller sees the same outcome: the
folder, the same skip (``pytest.skip`` raised inside ``build``) or the same failure, never a
half-built folder.

The folder lives in the run's base temporary directory, which pytest shares between the
workers of one run (``getbasetemp().parent`` under xdist) and removes with old runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

OUTCOME = ".outcome.json"


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every process of this test run agrees on."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker's base is a subfolder (popen-gwN) of the run's own folder.
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock`` (created if missing) across processes."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def shared_lock(tmp_path_factory: pytest.TempPathFactory, name: str) -> contextlib.AbstractContextManager[None]:
    """The run-wide lock called ``name`` (for callers that build through a script of their own)."""
    return exclusive(run_folder(tmp_path_factory) / "shared" / f"{name}.lock")


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` of this test run, built by ``build(folder)`` on the first call.

    ``build`` gets an empty folder; a ``pytest.skip`` it raises skips every caller with the
    same reason, any other exception fails every caller with its message.
    """
    folder = run_folder(tmp_path_factory) / "shared" / name
    outcome = folder.with_name(name + OUTCOME)
    with exclusive(folder.with_name(name + ".lock")):
        if not outcome.exists():
            folder.mkdir(parents=True, exist_ok=True)
            try:
                build(folder)
            except pytest.skip.Exception as skipped:
                outcome.write_text(json.dumps({"skip": str(skipped.msg)}), encoding="utf-8")
                raise
            except BaseException as exc:
                outcome.write_text(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), encoding="utf-8")
                raise
            outcome.write_text(json.dumps({"built": str(folder)}), encoding="utf-8")
            return folder
        recorded = json.loads(outcome.read_text(encoding="utf-8"))
    if "skip" in recorded:
        pytest.skip(recorded["skip"])
    if "error" in recorded:
        pytest.fail(f"the shared build {name!r} failed in another test of this run: {recorded['error']}", pytrace=False)
    return folder
