"""The harness wheel is kept under the digest of its sources (tests/harness_wheel.py): any
change to a source file's bytes or name, or another Python, gives another digest, so a kept
wheel is never installed for sources it was not built from."""

from __future__ import annotations

from pathlib import Path

import harness_wheel
import pytest


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_the_digest_follows_every_byte_and_name_of_the_sources(tmp_path: Path) -> None:
    base = {"toolnexus_conformance/plugin/hooks.py": b"x = 1\n", "fixtures/rules.json": b"{}"}
    first = harness_wheel.source_digest(_tree(tmp_path / "a", base))
    assert harness_wheel.source_digest(_tree(tmp_path / "b", base)) == first
    assert harness_wheel.source_digest(_tree(tmp_path / "c", {**base, "toolnexus_conformance/plugin/hooks.py": b"x = 2\n"})) != first
    assert harness_wheel.source_digest(_tree(tmp_path / "d", {**base, "fixtures/new.json": b""})) != first
    renamed = {"toolnexus_conformance/plugin/plugin2.py": b"x = 1\n", "fixtures/rules.json": b"{}"}
    assert harness_wheel.source_digest(_tree(tmp_path / "e", renamed)) != first


def test_the_digest_follows_the_python_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _tree(tmp_path, {"toolnexus_conformance/plugin/hooks.py": b"x = 1\n"})
    first = harness_wheel.source_digest(source)
    monkeypatch.setattr(harness_wheel.sys, "version", "3.99.0 (another build)")
    assert harness_wheel.source_digest(source) != first
