"""The rerun hint under a failing variant works where a port maintainer runs the harness:
in the port's own repository, with the harness installed from its wheel (not editable), so
the scenarios live in site-packages, outside the rootdir.

The test takes the wheel (built once per test run: tests/harness_wheel.py), installs it
into a venv of its own (kept in the build cache while the wheel is the same; the harness's dependencies come from this test's environment through a
.pth file, so no package index is needed for them), runs a failing variant from a "port repository" folder, and then runs the printed hint
verbatim from yet another folder: it must select that one variant and fail it the same way.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
from build_once import exclusive
from harness_wheel import WheelBuild, wheel_cache

# Building the wheel fetches the build backend (setuptools) into an isolated environment.
pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]

VARIANT = "relay-single-durable[openai-run]"
INSTALLED = ".installed"  # written last: the venv is complete


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _install_wheel(build: WheelBuild) -> Path:
    """A venv with the harness installed from its wheel; returns its bin folder.

    Kept in the harness's build cache beside the wheel, under the digest of the wheel's bytes,
    this interpreter and the site-packages its .pth file names: pip takes seconds to
    install it, and the venv is only read by the runs (a venv cannot be moved once made, so it
    is made in place, under a lock, and marked complete last)."""
    assert build.wheel is not None, f"pip could not build the harness wheel:\n{build.error}"
    deps = "\n".join(site.getsitepackages()) + "\n"
    key = hashlib.sha256(build.wheel.read_bytes() + f"\0{sys.executable}\0{deps}".encode()).hexdigest()[:16]
    kept = wheel_cache().with_name("harness-wheel-venv")
    venv = kept / key
    with exclusive(kept / f"{key}.lock"):
        if not (venv / INSTALLED).is_file():
            shutil.rmtree(venv, ignore_errors=True)  # a half-made venv of an interrupted run
            _make_venv(venv, build.wheel, deps)
            (venv / INSTALLED).write_text(build.wheel.name + "\n", encoding="utf-8")
            for older in kept.iterdir():  # only the venv of the current wheel is kept
                if older.is_dir() and older != venv:
                    shutil.rmtree(older, ignore_errors=True)
    return venv / "bin"


def _make_venv(venv: Path, wheel: Path, deps: str) -> None:
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], venv.parent)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], venv.parent).stdout.strip()
    # The dependencies (pytest, syrupy, ...) from this environment, after the venv's own
    # site-packages on sys.path, so the wheel's harness is the one imported.
    Path(purelib, "harness_deps.pth").write_text(deps, encoding="utf-8")
    installed = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)], venv.parent)
    assert installed.returncode == 0, installed.stdout + installed.stderr


def test_the_rerun_hint_reruns_the_same_variant_from_a_port_repository(tmp_path: Path, harness_wheel_build: WheelBuild) -> None:
    bin_dir = _install_wheel(harness_wheel_build)
    env = {k: v for k, v in os.environ.items() if k not in {"TOOLNEXUS_CONFORMANCE_FIXTURES", "PYTHONPATH", "VIRTUAL_ENV"}}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    port_repo = tmp_path / "port-repo"
    (port_repo / "tests").mkdir(parents=True)
    (port_repo / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n", encoding="utf-8")

    # A port without relay fails the relay variant; -k picks one variant of the whole suite.
    first = _run(
        ["python", "-m", "pytest", "-p", "no:cacheprovider", "--port=reference-norelay", "-k", "relay-single-durable and openai-run and not shorthand"],
        port_repo,
        env,
    )
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    hints = re.findall(r"^rerun: (.+)$", output, flags=re.MULTILINE)
    assert len(hints) == 1, output
    hint = hints[0]
    assert "site-packages" in hint and "toolnexus_conformance_data" in hint, hint  # the wheel's data, not the checkout
    assert f"::{VARIANT}'" in hint and "--port=reference-norelay" in hint

    elsewhere = tmp_path / "somewhere-else"
    elsewhere.mkdir()
    for folder in (port_repo, elsewhere):
        again = subprocess.run(hint, check=False, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        rerun_output = again.stdout + again.stderr
        assert again.returncode == 1, rerun_output
        assert "file or directory not found" not in rerun_output
        assert re.search(r"^1 failed in ", rerun_output.splitlines()[-1].strip("= ")), rerun_output
        assert f"scenario {VARIANT} (relay-single-durable.json) on port reference-norelay" in rerun_output
        assert "does not declare the capabilities ['relay']" in rerun_output
