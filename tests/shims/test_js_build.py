"""The js port's build step (toolnexus_conformance/builders/js_shim.py): what it accepts as a checkout, the
writable staged copy, the input stamp, and one-line failures. Hermetic: fake checkouts, and
fake node/npm programs on PATH stand in for the real ones (they log their arguments and do
what a test needs: write dist/index.js, or touch the lockfile)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from toolnexus_conformance.builders import js_shim
from toolnexus_conformance.builders.common import BuildError
from toolnexus_conformance.shim.ports import load_registry


def fake_checkout(root: Path, name: str = "toolnexus", lock: bool = True, read_only: bool = True) -> Path:
    port = root / "js"
    (port / "src").mkdir(parents=True)
    (port / "package.json").write_text(json.dumps({"name": name, "version": "0.16.0"}), encoding="utf-8")
    (port / "tsconfig.json").write_text("{}", encoding="utf-8")
    (port / "src" / "index.ts").write_text("export const x = 1\n", encoding="utf-8")
    if lock:
        (port / "package-lock.json").write_text('{"lockfileVersion": 3}', encoding="utf-8")
    (port / "node_modules" / "junk").mkdir(parents=True)  # never staged
    if read_only:
        for path in sorted(port.rglob("*"), reverse=True) + [port]:
            path.chmod(stat.S_IRUSR | stat.S_IRGRP | (stat.S_IXUSR | stat.S_IXGRP if path.is_dir() else 0))
    return root


def fake_toolchain(bin_dir: Path, log: Path, node_version: str = "v20.20.2", npm_ci: str = "") -> dict[str, str]:
    """node and npm scripts: node prints its version or, run as tsc, writes dist/index.js;
    npm ci creates the typescript compiler file and runs ``npm_ci`` (extra shell)."""
    bin_dir.mkdir(parents=True)
    node = bin_dir / "node"
    node.write_text(
        "#!/bin/sh\n"
        f'echo "node $*" >> {log}\n'
        f'if [ "$1" = --version ]; then echo {node_version}; exit 0; fi\n'
        "mkdir -p dist && echo 'export {}' > dist/index.js\n",
        encoding="utf-8",
    )
    npm = bin_dir / "npm"
    npm.write_text(
        "#!/bin/sh\n"
        f'echo "npm $*" >> {log}\n'
        "mkdir -p node_modules/typescript/bin && touch node_modules/typescript/bin/tsc\n"
        f"{npm_ci}\n",
        encoding="utf-8",
    )
    for program in (node, npm):
        program.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}


def test_a_folder_without_js_package_json_is_not_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="is not a toolnexus checkout: no js/package.json"):
        js_shim.port_dir(tmp_path)


def test_a_package_of_another_name_is_refused(tmp_path: Path) -> None:
    fake_checkout(tmp_path, name="left-pad")
    with pytest.raises(BuildError, match="names package 'left-pad', expected 'toolnexus'"):
        js_shim.port_dir(tmp_path)


def test_a_package_without_a_lockfile_is_refused(tmp_path: Path) -> None:
    fake_checkout(tmp_path, lock=False)
    with pytest.raises(BuildError, match="has no package-lock.json: npm ci needs"):
        js_shim.port_dir(tmp_path)


def test_an_old_node_is_one_clear_error(tmp_path: Path) -> None:
    env = fake_toolchain(tmp_path / "bin", tmp_path / "log", node_version="v18.19.0")
    with pytest.raises(BuildError, match=r"is node v18.19.0; the js port needs node >= 20"):
        js_shim.find_node(env)


def test_missing_npm_is_named(tmp_path: Path) -> None:
    env = fake_toolchain(tmp_path / "bin", tmp_path / "log")
    (tmp_path / "bin" / "npm").unlink()
    with pytest.raises(BuildError, match="npm is not on PATH"):
        js_shim.find_node({"PATH": str(tmp_path / "bin")} | {k: v for k, v in env.items() if k != "PATH"})


def test_stage_copies_only_the_inputs_writable_from_a_read_only_checkout(tmp_path: Path) -> None:
    port = fake_checkout(tmp_path / "co") / "js"
    work = tmp_path / "work"
    js_shim.stage(port, work)
    assert sorted(p.name for p in work.iterdir()) == ["package-lock.json", "package.json", "src", "tsconfig.json"]
    (work / "src" / "new.ts").write_text("", encoding="utf-8")  # the copy is writable
    js_shim.stage(port, work)  # and a second stage replaces it
    assert not (work / "src" / "new.ts").exists()


def test_inputs_digest_follows_sources_and_node(tmp_path: Path) -> None:
    port = fake_checkout(tmp_path, read_only=False) / "js"
    first = js_shim.inputs_digest(port, "v20.1.0")
    assert js_shim.inputs_digest(port, "v22.0.0") != first
    (port / "src" / "index.ts").write_text("export const x = 2\n", encoding="utf-8")
    changed = js_shim.inputs_digest(port, "v20.1.0")
    assert changed != first
    (port / "node_modules" / "junk" / "f").write_text("x", encoding="utf-8")  # not an input
    assert js_shim.inputs_digest(port, "v20.1.0") == changed


def test_build_runs_npm_ci_then_tsc_and_reuses_an_unchanged_build(tmp_path: Path) -> None:
    src = fake_checkout(tmp_path / "co")
    log = tmp_path / "log"
    env = fake_toolchain(tmp_path / "bin", log)
    out = tmp_path / "cache"
    entry = js_shim.build(src, out, env)
    assert entry == out / "port" / "dist" / "index.js" and entry.is_file()
    steps = log.read_text(encoding="utf-8").splitlines()
    assert steps[0] == "node --version"
    assert steps[1] == "npm ci --no-audit --no-fund --ignore-scripts"
    assert steps[2].startswith("node ") and steps[2].endswith("node_modules/typescript/bin/tsc -p tsconfig.json")
    assert (out / "node").resolve() == (tmp_path / "bin" / "node").resolve()
    log.write_text("", encoding="utf-8")
    js_shim.build(src, out, env)
    assert log.read_text(encoding="utf-8").splitlines() == ["node --version"], "an unchanged build must not rerun npm or tsc"


def test_npm_rewriting_the_lockfile_fails_the_build(tmp_path: Path) -> None:
    src = fake_checkout(tmp_path / "co")
    env = fake_toolchain(tmp_path / "bin", tmp_path / "log", npm_ci="echo '{}' > package-lock.json")
    with pytest.raises(BuildError, match="npm ci changed .*package-lock.json: the port must build from its own lockfile"):
        js_shim.build(src, tmp_path / "cache", env)
    assert not (tmp_path / "cache" / "build.stamp").exists()


def test_a_failing_npm_ci_names_the_command_and_its_output(tmp_path: Path) -> None:
    src = fake_checkout(tmp_path / "co")
    env = fake_toolchain(tmp_path / "bin", tmp_path / "log", npm_ci="echo 'npm ERR! ETARGET forwarded@0.4.0' >&2; exit 1")
    with pytest.raises(BuildError) as caught:
        js_shim.build(src, tmp_path / "cache", env)
    assert "npm ci --no-audit --no-fund --ignore-scripts" in str(caught.value)
    assert "(exit 1)" in str(caught.value) and "ETARGET forwarded@0.4.0" in str(caught.value)


def test_main_prints_one_line_and_exits_1_without_a_checkout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert js_shim.main(["--src", str(tmp_path), "--out", str(tmp_path / "cache")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("js shim: ") and len(err.strip().splitlines()) == 1


def test_registry_entry_for_js() -> None:
    js = load_registry()["js"]
    assert js.needs_source and js.toolchain == "npm"
    assert js.start == ("{cache}/node", "{root}/shims/js/shim.mjs", "{cache}/port/dist/index.js")
    assert "{src}" in js.build[0] and "toolnexus_conformance.builders.js_shim" in js.build[0]
