"""``build_once``: one build per test run, whatever the number of processes asking for it,
and every caller sees the build's outcome (its folder, its skip or its failure)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
from build_once import build_once, run_folder

TESTS = Path(__file__).resolve().parent


class Base:
    """A stand-in for pytest's TempPathFactory: only the run's base folder is read."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def getbasetemp(self) -> Path:
        return self.folder


def factory(folder: Path) -> pytest.TempPathFactory:
    return cast(pytest.TempPathFactory, Base(folder))


@pytest.fixture(autouse=True)
def _outside_xdist(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in base folder is the run's folder itself, for this process and the callers
    it starts, even when this test runs in an xdist worker."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


# One caller, as a process of its own (not a fork: under xdist this worker may run threads,
# the mutants' pool, and a fork of a threaded process can deadlock on a lock one of them held).
CALLER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from build_once import build_once

class Base:
    def getbasetemp(self):
        return Path(sys.argv[2])

def slow_build(folder):
    with open(folder.parent / "builds.log", "a", encoding="utf-8") as log:
        log.write("built\\n")
    time.sleep(0.3)  # long enough for every other caller to arrive while it builds
    (folder / "artifact").write_text("ready", encoding="utf-8")

folder = build_once(Base(), "thing", slow_build)
print(folder, (folder / "artifact").read_text(encoding="utf-8"))
"""


def test_concurrent_processes_build_once_and_share_the_folder(tmp_path: Path) -> None:
    base = tmp_path / "run"
    base.mkdir()
    argv = [sys.executable, "-c", CALLER, str(TESTS), str(base)]
    callers = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [caller.communicate(timeout=120) for caller in callers]
    assert [c.returncode for c in callers] == [0, 0, 0, 0], outputs
    builds = (base / "shared" / "builds.log").read_text(encoding="utf-8").splitlines()
    assert builds == ["built"], f"the build ran {len(builds)} times for 4 callers"
    seen = {out.strip() for out, _ in outputs}
    assert seen == {f"{base / 'shared' / 'thing'} ready"}, "every caller gets the one built folder"


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
