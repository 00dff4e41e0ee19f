"""``resolve_locked`` builds a port while holding that port's run-wide lock, so a second
xdist worker waits for the build instead of rebuilding the same cache folder under it."""

from __future__ import annotations

import fcntl
from pathlib import Path

import port_build_lock
import pytest
from build_once import run_folder

from toolnexus_conformance.shim.ports import ResolvedPort


def lock_is_held(path: Path) -> bool:
    if not path.exists():
        return False
    with open(path, "a+b") as other:
        try:
            fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(other.fileno(), fcntl.LOCK_UN)
        return False


def test_the_port_is_resolved_under_its_own_lock(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    lock = run_folder(tmp_path_factory) / "shared" / "port-build-python.lock"
    seen: list[tuple[str, bool]] = []

    def fake_resolve(name: str, port_cmd: str | None, port_src: str | None, timeout: float | None) -> ResolvedPort:
        seen.append((name, lock_is_held(lock)))
        return ResolvedPort(name, ["python", "shim.py"], 10.0, {})

    monkeypatch.setattr(port_build_lock, "resolve", fake_resolve)
    resolved = port_build_lock.resolve_locked(tmp_path_factory, "python")
    assert resolved.argv == ["python", "shim.py"]
    assert seen == [("python", True)], "resolve (the build) must run while the port's lock is held"
    assert not lock_is_held(lock), "the lock is released once the port is resolved"
