"""``build_once``: one build per test run, whatever the number of processes asking for it,
and every caller sees the build's outcome (its folder, its skip or its failure)."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any, cast

import pytest
from build_once import build_once, run_folder


class Base:
    """A stand-in for pytest's TempPathFactory: only the run's base folder is read."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def getbasetemp(self) -> Path:
        return self.folder


def factory(folder: Path) -> pytest.TempPathFactory:
    return cast(pytest.TempPathFactory, Base(folder))


def _slow_build(folder: Path) -> None:
    counter = folder.parent / "builds.log"
    with open(counter, "a", encoding="utf-8") as log:
        log.write("built\n")
    time.sleep(0.3)  # long enough for every other process to arrive while it builds
    (folder / "artifact").write_text("ready", encoding="utf-8")


def _caller(base: str, results: Any) -> None:
    folder = build_once(factory(Path(base)), "thing", _slow_build)
    results.put((str(folder), (folder / "artifact").read_text(encoding="utf-8")))


def test_concurrent_processes_build_once_and_share_the_folder(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    callers = [context.Process(target=_caller, args=(str(tmp_path), results)) for _ in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(30)
    assert [c.exitcode for c in callers] == [0, 0, 0, 0]
    seen = {results.get(timeout=5) for _ in callers}
    assert seen == {(str(tmp_path / "shared" / "thing"), "ready")}, "every caller gets the one built folder"
    builds = (tmp_path / "shared" / "builds.log").read_text(encoding="utf-8").splitlines()
    assert builds == ["built"], f"the build ran {len(builds)} times for 4 callers"


def test_a_skipped_build_skips_every_later_caller_with_its_reason(tmp_path: Path) -> None:
    calls: list[Path] = []

    def skipping(folder: Path) -> None:
        calls.append(folder)
        pytest.skip("no package index here")

    for _ in range(2):
        with pytest.raises(pytest.skip.Exception, match="no package index here"):
            build_once(factory(tmp_path), "wheel", skipping)
    assert len(calls) == 1, "a later caller must not build again"


def test_a_failed_build_fails_every_later_caller_with_its_message(tmp_path: Path) -> None:
    def broken(folder: Path) -> None:
        raise RuntimeError("pip exploded")

    with pytest.raises(RuntimeError, match="pip exploded"):
        build_once(factory(tmp_path), "wheel", broken)
    with pytest.raises(pytest.fail.Exception, match=r"shared build 'wheel' failed in another test of this run: RuntimeError: pip exploded"):
        build_once(factory(tmp_path), "wheel", broken)


def test_xdist_workers_share_the_runs_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = tmp_path / "popen-gw1"
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert run_folder(factory(worker)) == tmp_path
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert run_folder(factory(worker)) == worker
