"""The CI gate end to end, as a port's repository would run it, without GitHub: build this
repository's wheel, let ``ci-gate/run_gate.sh`` install it into a fresh venv, and run the
gate inside a copy of a port's repository with ``GITHUB_STEP_SUMMARY`` pointing at a file.
Each test checks the exit code, the JUnit XML and what the job summary says.

The harness wheel is built once per test run and the gate venv shared by the run's tests
(the first gate run installs it fresh, the later ones reuse it, as run_gate.sh allows); the
harness's dependencies and the python port come from the package index; without one the tests
are skipped with that reason. The golang test needs ``go`` and a toolnexus checkout in
``TOOLNEXUS_SRC`` (copied, never touched).

A gate (the tier of real ports, registries and the CI gate end to end): it installs from the
package index and builds ports, minutes of work that test the drop-in gate rather than the
harness, so the README's test command leaves tests/gates out; `python -m pytest -n auto
tests/gates` runs it (.ci/run runs both). The action's input handling, which needs none of
that, stays in the test command (tests/ci_gate/test_action_inputs.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from build_once import run_folder, shared_lock
from harness_wheel import WheelBuild

REPO = Path(__file__).resolve().parents[2]
GATE = REPO / "ci-gate" / "run_gate.sh"
pytestmark = [pytest.mark.timeout(1800), pytest.mark.slow]


@dataclass
class GateResult:
    code: int
    output: str
    summary: str  # the GITHUB_STEP_SUMMARY file
    results: Path

    def failed_tests(self) -> list[str]:
        root = ET.parse(self.results / "junit.xml").getroot()
        return [c.get("name", "") for c in root.iter("testcase") if c.find("failure") is not None or c.find("error") is not None]

    def test_count(self) -> int:
        return sum(1 for _ in ET.parse(self.results / "junit.xml").getroot().iter("testcase"))


@pytest.fixture(scope="module")
def harness_wheel(harness_wheel_build: WheelBuild) -> Path:
    """This repository's wheel (built once per test run, from a clean copy: a stale build/
    folder in the checkout must not leak into it)."""
    if harness_wheel_build.wheel is None:
        pytest.skip(f"cannot build the harness wheel (pip needs setuptools from the package index): {harness_wheel_build.error}")
    return harness_wheel_build.wheel


@pytest.fixture(scope="module")
def gate_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One gate venv for the whole test run, whatever the number of xdist workers: the first
    gate run creates it and installs the harness with its dependencies from the package index
    (run_gate.sh's fresh install), every later one reuses it (its "existing venv" path)."""
    return run_folder(tmp_path_factory) / "shared" / "gate-venv"


@pytest.fixture
def run_gate(harness_wheel: Path, gate_venv: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    summary = tmp_path / "step-summary.md"

    def run(repo: Path, *args: str) -> GateResult:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLNEXUS_", "PYTHON", "GITHUB_", "PYTEST_"))}
        env.update(
            TOOLNEXUS_HARNESS=str(harness_wheel),
            TOOLNEXUS_GATE_VENV=str(gate_venv),
            TOOLNEXUS_CONFORMANCE_CACHE=str(tmp_path / "cache"),
            GITHUB_STEP_SUMMARY=str(summary),
            PYTHON=sys.executable,
        )
        done = None
        # Two gates must not create the one venv at the same time: the first run (the fresh
        # install) holds the run-wide lock; once the venv exists, runs only read it and go
        # side by side.
        with shared_lock(tmp_path_factory, "gate-venv"):
            if not (gate_venv / "bin" / "python").exists():
                done = subprocess.run([str(GATE), *args], cwd=repo, env=env, check=False, capture_output=True, text=True, timeout=1700)
        if done is None:
            done = subprocess.run([str(GATE), *args], cwd=repo, env=env, check=False, capture_output=True, text=True, timeout=1700)
        output = done.stdout + done.stderr
        if done.returncode != 0 and "pip" in output and ("Could not find a version" in output or "No matching distribution" in output):
            pytest.skip(f"the package index cannot serve the harness's dependencies: {output[-400:]}")
        return GateResult(done.returncode, output, summary.read_text(encoding="utf-8") if summary.exists() else "", repo / "conformance-results")

    yield run


def test_gate_fails_on_a_wrong_expectation_and_passes_once_it_is_fixed(run_gate, tmp_path: Path) -> None:
    """A port repository (reference port: no build) whose expectations file claims a failure
    that does not happen: the gate fails with JUnit and summary saying so; fixed, it passes."""
    repo = tmp_path / "port-repo"
    (repo / "conformance").mkdir(parents=True)
    # The repository's own pytest settings must not reach the gate's run.
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = ["--no-such-option"]\n', encoding="utf-8")
    wrong = repo / "conformance" / "reference.toml"
    wrong.write_text(
        'port = "reference"\n\n[[expected]]\nkey = "relay-declined-durable[openai-run]::relay.declined"\n'
        'reason = "divergence"\nnote = "deliberately wrong"\n',
        encoding="utf-8",
    )
    args = ("--port=reference", "--expectations=conformance/reference.toml", "--", "-k", "relay-declined-durable")

    first = run_gate(repo, *args)
    assert first.code == 1, first.output[-2000:]
    assert first.failed_tests() == ["relay-declined-durable[openai-run]"]
    assert first.test_count() == 6
    assert "## toolnexus conformance: port `reference` **FAILED** (pytest exit code 1)" in first.summary
    assert "[relay.declined] passes now but is listed as an expected failure" in first.summary
    assert "| `relay.declined` | normative |" in first.summary  # the rule matrix
    assert (first.results / "report.json").is_file() and (first.results / "summary.md").is_file()

    wrong.write_text('port = "reference"\n', encoding="utf-8")
    second = run_gate(repo, *args)
    assert second.code == 0, second.output[-2000:]
    assert second.failed_tests() == [] and second.test_count() == 6
    # Appended to the job summary, after the first run's section.
    assert second.summary.index("**FAILED**") < second.summary.index("## toolnexus conformance: port `reference` passed")
    assert "- **reference** (reference_py " in second.summary


def test_gate_refuses_a_missing_expectations_file_with_one_clear_line(run_gate, tmp_path: Path) -> None:
    repo = tmp_path / "port-repo"
    repo.mkdir()
    result = run_gate(repo, "--port=reference", "--expectations=conformance/reference.toml")
    assert result.code == 2
    assert "ci_gate: --expectations=conformance/reference.toml: no such file" in result.output
    assert "Traceback" not in result.output
    assert "**could not run**" in result.summary


def _python_port_repository(into: Path) -> Path:
    """The python port's repository as its maintainers have it: the toolnexus 0.21.0 source
    distribution, its version bumped so the run proves it drove this source, not PyPI's."""
    download = into / "download"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:", "toolnexus==0.21.0", "-d", str(download)],
        check=False, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"the package index does not serve toolnexus 0.21.0's source: {done.stderr[-400:]}")
    (sdist,) = download.glob("toolnexus-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(into, filter="data")
    repo = into / "toolnexus-0.21.0"
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8").replace('version = "0.21.0"', 'version = "0.21.0.post7"'), encoding="utf-8")
    return repo


def _gate_passes_in(run_gate, repo: Path, port: str, select: str, *, tests: int) -> GateResult:
    """The gate run in a port's repository, built from it (``--port-src=.``), under this
    repository's expectations for the port: it passes, with ``tests`` variants selected."""
    (repo / "conformance").mkdir(exist_ok=True)
    shutil.copy(REPO / "conformance" / f"{port}.toml", repo / "conformance" / f"{port}.toml")
    result = run_gate(repo, f"--port={port}", "--port-src=.", f"--expectations=conformance/{port}.toml", "--", "-k", select)
    assert result.code == 0, result.output[-3000:]
    assert result.failed_tests() == [] and result.test_count() == tests
    return result


def test_gate_builds_the_python_port_from_the_repository_under_test(run_gate, tmp_path: Path) -> None:
    result = _gate_passes_in(run_gate, _python_port_repository(tmp_path), "python", "susp-inprocess-unresolved and not beside", tests=12)
    assert "- **python** (toolnexus 0.21.0.post7): " in result.summary
    assert "not testable (the port does not declare the capability: " in result.summary
    # python's Request goes on the wire as the port projects it (None absent): the rules this
    # selection exercises all pass, and the summary says the port passed.
    assert "## toolnexus conformance: port `python` passed" in result.summary
    assert ", 0 fail, " in result.summary


def test_gate_builds_golang_from_a_copy_of_a_checkout(run_gate, tmp_path: Path) -> None:
    checkout = os.environ.get("TOOLNEXUS_SRC")
    if shutil.which("go") is None:
        pytest.skip("golang: `go` is not installed on this machine")
    if not checkout:
        pytest.skip("golang: no registry here serves the port; set TOOLNEXUS_SRC to a toolnexus checkout to run it")
    repo = tmp_path / "toolnexus"
    shutil.copytree(checkout, repo, ignore=shutil.ignore_patterns(".git"))
    result = _gate_passes_in(run_gate, repo, "golang", "relay-declined-durable", tests=6)
    assert "- **golang** (github.com/muthuishere/toolnexus/golang " in result.summary
    assert "+checkout): " in result.summary
    assert (
        "`python -m toolnexus_conformance.ci_gate --port=golang --port-src=. --expectations=conformance/golang.toml "
        "-- -k 'relay-declined-durable[openai-run]' --rule=relay.declined`"
    ) in result.summary
