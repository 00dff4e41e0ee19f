"""The ports' build helpers (toolnexus_conformance/builders/): what they stage, skip and refuse.

No network and no toolchain here: the venv helper is checked up to its decision to
rebuild, the Go helper up to the commands it would run on its scratch copy.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from toolnexus_conformance.builders import go_shim, python_venv
from toolnexus_conformance.helpers.paths import repo_root
from toolnexus_conformance.shim.ports import load_registry

ROOT = repo_root()


def _checkout(tmp_path: Path, module: str = go_shim.PORT_MODULE) -> Path:
    port = tmp_path / "checkout" / "golang"
    port.mkdir(parents=True)
    (port / "go.mod").write_text(f"module {module}\n\ngo 1.23.0\n", encoding="utf-8")
    return tmp_path / "checkout"


def test_requirements_digest_ignores_comments_and_blank_lines(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("# pinned\ntoolnexus==0.21.0\n\n", encoding="utf-8")
    b.write_text("toolnexus==0.21.0\n", encoding="utf-8")
    assert python_venv.requirements_digest(a) == python_venv.requirements_digest(b)
    b.write_text("toolnexus==0.20.0\n", encoding="utf-8")
    assert python_venv.requirements_digest(a) != python_venv.requirements_digest(b)


def test_venv_is_current_only_with_interpreter_and_matching_stamp(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    assert not python_venv.is_current(venv, "abc")
    python = python_venv.venv_python(venv)
    python.parent.mkdir(parents=True)
    python.write_text("", encoding="utf-8")
    assert not python_venv.is_current(venv, "abc")
    (venv / python_venv.STAMP).write_text("abc\n", encoding="utf-8")
    assert python_venv.is_current(venv, "abc")
    assert not python_venv.is_current(venv, "def")


def test_current_venv_is_not_rebuilt(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("toolnexus==0.21.0\n", encoding="utf-8")
    venv = tmp_path / "venv"
    python = python_venv.venv_python(venv)
    python.parent.mkdir(parents=True)
    python.write_text("", encoding="utf-8")
    (venv / python_venv.STAMP).write_text(python_venv.requirements_digest(requirements), encoding="utf-8")
    # An interpreter that cannot run proves no command was attempted.
    assert python_venv.build(venv, requirements, interpreter=str(tmp_path / "no-python")) is False


def test_failed_venv_command_is_one_clear_error(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("toolnexus==0.21.0\n", encoding="utf-8")
    with pytest.raises(python_venv.BuildError, match="-m venv"):
        python_venv.build(tmp_path / "venv", requirements, interpreter=sys.executable + "-missing")


def test_python_pin_is_the_probed_release() -> None:
    lines = (ROOT / "shims/python/requirements.txt").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == ["toolnexus==0.21.0"]


def test_port_dir_accepts_a_checkout_and_refuses_others(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    assert go_shim.port_dir(checkout) == checkout / "golang"
    with pytest.raises(go_shim.BuildError, match="no golang/go.mod"):
        go_shim.port_dir(tmp_path / "elsewhere")
    other = _checkout(tmp_path / "x", module="example.com/other")
    with pytest.raises(go_shim.BuildError, match="expected github.com/muthuishere/toolnexus/golang"):
        go_shim.port_dir(other)


def test_stage_copies_the_module_into_a_fresh_folder(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "stale.go").write_text("package main\n", encoding="utf-8")
    go_shim.stage(ROOT / "shims/golang", work)
    staged = sorted(p.name for p in work.iterdir())
    assert "stale.go" not in staged
    assert "go.mod" in staged and "main.go" in staged
    assert all(name.endswith(".go") or name in go_shim.SHIM_FILES for name in staged)


def test_replace_goes_to_the_scratch_copy_never_the_committed_module(tmp_path: Path) -> None:
    committed = (ROOT / "shims/golang/go.mod").read_text(encoding="utf-8")
    directives = [line.split()[0] for line in committed.splitlines() if line.strip() and not line.startswith("//")]
    assert "replace" not in directives
    assert "require github.com/muthuishere/toolnexus/golang v0.16.0" in committed
    steps = go_shim.commands(tmp_path / "checkout" / "golang", tmp_path / "bin" / "golang-shim", "0.16.0+checkout")
    assert steps[0] == ["go", "mod", "edit", f"-replace={go_shim.PORT_MODULE}={tmp_path / 'checkout' / 'golang'}"]
    assert [s[:3] for s in steps[1:]] == [["go", "mod", "tidy"], ["go", "build", "-trimpath"]]
    assert "-ldflags=-X main.portVersion=0.16.0+checkout" in steps[2] and "-race" not in steps[2]
    raced = go_shim.commands(tmp_path / "checkout" / "golang", tmp_path / "bin" / "golang-shim", "x", race=True)
    assert raced[2][:4] == ["go", "build", "-trimpath", "-race"]


def test_checkout_version_is_the_newest_changelog_release_marked_as_a_checkout(tmp_path: Path) -> None:
    assert go_shim.checkout_version(tmp_path) == "checkout"
    (tmp_path / "CHANGELOG.md").write_text(
        "# Changelog\n\n## Unreleased\n\n- relay fix\n\n## 0.17.1 — 2026-11-02\n\n## 0.17.0\n", encoding="utf-8")
    assert go_shim.checkout_version(tmp_path) == "0.17.1+checkout"


def test_registry_entries_for_python_and_golang() -> None:
    ports = load_registry()
    python, golang = ports["python"], ports["golang"]
    assert python.start[0] == "{cache}/venv/bin/python" and not python.needs_source
    assert golang.needs_source and golang.toolchain == "go" and golang.start == ("{cache}/bin/golang-shim",)
    raw = tomllib.loads((ROOT / "toolnexus_conformance/shim/ports.toml").read_text(encoding="utf-8"))
    assert "{src}" in " ".join(raw["golang"]["build"][0])
    race = ports["golang-race"]
    assert race.needs_source and "--race" in race.build[0] and race.start == golang.start
    assert race.env["GORACE"].split() == ["halt_on_error=1", "exitcode=66"], "a race must end the shim, not just log"


def test_notes_a_build_step_prints_reach_the_resolved_port(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolnexus_conformance.shim import ports

    said = subprocess.CompletedProcess([], 0, stdout="building\nnote: the shim starts cold\nnote: and why\n", stderr="")
    monkeypatch.setattr(ports.subprocess, "run", lambda *a, **k: said)
    assert ports.run_build_step(["build"], {}, "java") == ["the shim starts cold", "and why"]
