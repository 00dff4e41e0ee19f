"""A shim adds nothing and cleans nothing (SPEC §6): for each real port's shim, port objects
with nulls, empties and absent optionals go through the shim's own serialization code and
through the serializer the rule names for that language, and the two must give the same
bytes. Each language prints the same case lines, ``{"case", "shim", "serializer"}``:

- js: ``tests/shims/honesty/js_cases.mjs`` over ``shims/js/wire.mjs`` (JSON.stringify);
- python: ``tests/shims/honesty/python_cases.py`` over ``shims/python/neutral.py``
  (dataclasses.asdict + json), in a venv holding the PyPI port;
- golang: ``shims/golang/neutral_test.go`` (encoding/json), against TOOLNEXUS_SRC;
- java: the shim jar's ``WireCheck`` debug entry (Jackson defaults), against TOOLNEXUS_SRC.

A missing toolchain or checkout skips that shim with the reason. Each comparison is also fed
a deliberately cleaning copy of the shim, which it must catch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from build_once import shared_lock
from port_build_lock import lock_name, resolve_locked

from toolnexus_conformance.builders import go_shim, java_shim
from toolnexus_conformance.builders.common import BuildError
from toolnexus_conformance.helpers.paths import repo_root
from toolnexus_conformance.shim.ports import PortError, cache_dir

ROOT = repo_root()
HONESTY = Path(__file__).resolve().parent / "honesty"
CHECKOUT = os.environ.get("TOOLNEXUS_SRC")
# Builds of the shims' broken copies, beside the ports' caches. The unchanged python and java
# shims are the registry's own builds, made under a run-wide lock per port (port_build_lock),
# so a run installs the python port from PyPI and builds the java shim with Maven once.
CACHE = Path(os.environ.get("TOOLNEXUS_CONFORMANCE_CACHE", ROOT / ".cache" / "conformance")).resolve() / "honesty"
NO_CHECKOUT = "no registry here serves the port; set TOOLNEXUS_SRC to a toolnexus checkout to run it"


def mismatches(output: str, prefix: str = "") -> tuple[int, list[str]]:
    """How many case lines ``output`` holds, and one readable line per case whose shim bytes
    differ from the serializer's."""
    count, found = 0, []
    for line in output.splitlines():
        if not line.startswith(prefix) or not line[len(prefix):].lstrip().startswith("{"):
            continue
        case = json.loads(line[len(prefix):])
        count += 1
        if case["shim"] != case["serializer"]:
            found.append(f"{case['case']}: the shim sends {case['shim']}\n    the serializer gives {case['serializer']}")
    return count, found


def run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def assert_honest(done: subprocess.CompletedProcess[str], shim: str, prefix: str = "", minimum: int = 5) -> None:
    count, found = mismatches(done.stdout, prefix)
    assert count >= minimum, f"{shim}: expected at least {minimum} cases, got {count}:\n{done.stdout}\n{done.stderr}"
    assert not found, f"{shim} cleans what the port produced:\n  " + "\n  ".join(found)


def test_mismatches_reads_case_lines_and_names_the_differing_case() -> None:
    output = "\n".join([
        "noise",
        json.dumps({"case": "same", "shim": '{"a":null}', "serializer": '{"a":null}'}),
        json.dumps({"case": "cleaned", "shim": "{}", "serializer": '{"a":null}'}),
    ])
    count, found = mismatches(output)
    assert count == 2
    assert found == ['cleaned: the shim sends {}\n    the serializer gives {"a":null}']


# -- js ------------------------------------------------------------------------------------


def _js_cases(wire: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("node") is None:
        pytest.skip("js shim: toolchain 'node' is not installed on this machine")
    return run(["node", str(HONESTY / "js_cases.mjs"), str(wire)])


def test_js_shim_sends_what_json_stringify_gives() -> None:
    done = _js_cases(ROOT / "shims" / "js" / "wire.mjs")
    assert done.returncode == 0, done.stderr
    assert_honest(done, "shims/js")


def test_js_check_catches_a_shim_that_drops_nulls(tmp_path: Path) -> None:
    cleaning = tmp_path / "wire.mjs"
    source = (ROOT / "shims" / "js" / "wire.mjs").read_text(encoding="utf-8")
    cleaning.write_text(source.replace("JSON.stringify(value)", "JSON.stringify(value, (k, v) => (v === null ? undefined : v))"), encoding="utf-8")
    done = _js_cases(cleaning)
    assert done.returncode == 0, done.stderr
    _, found = mismatches(done.stdout)
    assert any(line.startswith("RunResult:") and '"content":null' in line for line in found), found


# -- python --------------------------------------------------------------------------------


def _python_port(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python port's interpreter: the registry's own venv (the one ``--port=python``
    runs), built once per test run for every test that starts the port."""
    try:
        resolved = resolve_locked(tmp_path_factory, "python")
    except PortError as exc:
        pytest.skip(f"python shim: cannot install the port from PyPI here: {str(exc).splitlines()[0]}")
    return Path(resolved.argv[0])


@pytest.mark.timeout(300)  # installs the port from PyPI when its venv is not cached yet
def test_python_shim_sends_what_asdict_gives(tmp_path_factory: pytest.TempPathFactory) -> None:
    done = run([str(_python_port(tmp_path_factory)), str(HONESTY / "python_cases.py"), str(ROOT / "shims" / "python")])
    assert done.returncode == 0, done.stderr
    assert_honest(done, "shims/python")


@pytest.mark.timeout(300)
def test_python_check_catches_a_shim_that_drops_none_fields(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    python = _python_port(tmp_path_factory)
    shim = tmp_path / "python"
    shutil.copytree(ROOT / "shims" / "python", shim)
    neutral = shim / "neutral.py"
    source = neutral.read_text(encoding="utf-8")
    cleaning = "        return {k: v for k, v in dataclasses.asdict(value).items() if v is not None}\n"
    neutral.write_text(source.replace("        return dataclasses.asdict(value)\n", cleaning), encoding="utf-8")
    done = run([str(python), str(HONESTY / "python_cases.py"), str(shim)])
    assert done.returncode == 0, done.stderr
    _, found = mismatches(done.stdout)
    assert any(line.startswith("RunResult") for line in found), found


# -- golang --------------------------------------------------------------------------------


def _go_test(tmp_path: Path, mutate: tuple[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which("go") is None:
        pytest.skip("golang shim: toolchain 'go' is not installed on this machine")
    if not CHECKOUT:
        pytest.skip(f"golang shim: {NO_CHECKOUT}")
    work = tmp_path / "module"
    go_shim.stage(ROOT / "shims" / "golang", work)
    if mutate is not None:
        neutral = work / "neutral.go"
        source = neutral.read_text(encoding="utf-8")
        assert mutate[0] in source, f"the mutation's target is gone from neutral.go: {mutate[0]!r}"
        neutral.write_text(source.replace(mutate[0], mutate[1]), encoding="utf-8")
    env = go_shim.go_environment()
    port = go_shim.port_dir(Path(CHECKOUT)).resolve()
    for argv in (["go", "mod", "edit", f"-replace={go_shim.PORT_MODULE}={port}"], ["go", "mod", "tidy"]):
        prepared = run(argv, cwd=work, env=env)
        assert prepared.returncode == 0, f"{' '.join(argv)}: {prepared.stdout}{prepared.stderr}"
    # -trimpath as in the shim's build, so Go's build cache already holds the compiled port.
    return run(["go", "test", "-trimpath", "-count=1", "-run", "TestShimHonesty", "-v", "."], cwd=work, env=env)


@pytest.mark.timeout(600)  # compiles the port when Go's build cache does not hold it yet
def test_golang_shim_sends_what_encoding_json_gives(tmp_path: Path) -> None:
    done = _go_test(tmp_path)
    assert_honest(done, "shims/golang", prefix="HONESTY ")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.timeout(600)
def test_golang_check_catches_a_shim_that_defaults_nil_args(tmp_path: Path) -> None:
    done = _go_test(tmp_path, ('"name": ev.Name, "args": ev.Args}', '"name": ev.Name, "args": map[string]any{}}'))
    _, found = mismatches(done.stdout, "HONESTY ")
    assert done.returncode != 0
    assert any(line.startswith("stream event tool_call:") for line in found), found


# -- java ----------------------------------------------------------------------------------


def _wire_check(shim: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Build the java shim at ``shim`` into ``out`` (cached by input digest) and run WireCheck."""
    if shutil.which("mvn") is None:
        pytest.skip("java shim: toolchain 'mvn' is not installed on this machine")
    if not CHECKOUT:
        pytest.skip(f"java shim: {NO_CHECKOUT}")
    try:
        jdk = java_shim.find_jdk()
    except BuildError as exc:
        pytest.skip(f"java shim: {exc}")
    jar = java_shim.build(shim, Path(CHECKOUT), out)
    done = run([str(jdk.home / "bin" / "java"), "-cp", str(jar), "dev.toolnexus.conformance.shim.WireCheck"])
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.mark.timeout(900)  # a Maven build when the jar is not cached yet
def test_java_shim_sends_what_jackson_defaults_give(tmp_path_factory: pytest.TempPathFactory) -> None:
    # The registry's own build of the shim (the one --port=java runs: same shim, checkout and
    # JDK, so the same build), made once per test run under that port's lock.
    with shared_lock(tmp_path_factory, lock_name("java")):
        done = _wire_check(ROOT / "shims" / "java", cache_dir() / "java")
    assert_honest(done, "shims/java")


@pytest.mark.timeout(900)
def test_java_check_catches_a_shim_that_defaults_a_null_delta(tmp_path: Path) -> None:
    shim = tmp_path / "java"
    shutil.copytree(ROOT / "shims" / "java", shim, ignore=shutil.ignore_patterns("target"))
    neutral = next(shim.rglob("Neutral.java"))
    source = neutral.read_text(encoding="utf-8")
    honest = 'm.put("delta", e.delta());'
    assert honest in source, f"the mutation's target is gone from Neutral.java: {honest!r}"
    neutral.write_text(source.replace(honest, 'm.put("delta", e.delta() == null ? "" : e.delta());'), encoding="utf-8")
    _, found = mismatches(_wire_check(shim, CACHE / "java-cleaning").stdout)
    assert any(line.startswith("stream event text:") for line in found), found
