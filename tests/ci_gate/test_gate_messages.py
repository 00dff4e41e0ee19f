"""The CI gate's words to a maintainer (toolnexus_conformance/ci_gate/gate.py): misuse refused before anything
is built, in the plugin's words; the summary's commands whole and runnable (the harness
install first, each failed test's rerun naming a real scenario file, the expectations update
with the run's selection); -n not taken for a selection. Seconds: the gate's summary is
rendered from a results folder written here, no port is run."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from toolnexus_conformance.ci_gate import gate as ci_gate
from toolnexus_conformance.helpers.paths import scenarios_dir

REPO = Path(__file__).resolve().parents[2]
LONG_WHY = "[relay.calls-in-one-request] (normative, divergence) " + "word " * 80 + "END-OF-LINE"


def _gate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolnexus_conformance.ci_gate", *args], capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--port=reference", "--port-src=."], "port 'reference' does not build from a toolnexus checkout, so --port-src would be ignored"),
        (["--port=golang"], "run it against a checkout: pytest --port=golang --port-src=PATH/TO/toolnexus"),
        (["--port=nope"], "unknown port 'nope'"),
        (["--port=reference", "--expectations=missing.toml"], "no such file (create it with --update-expectations)"),
    ],
)  # fmt: skip
def test_misuse_is_one_line_before_anything_runs(args: list[str], said: str, tmp_path: Path) -> None:
    done = _gate(*args, f"--out={tmp_path / 'out'}", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"ci_gate: {done.stderr.strip().removeprefix('ci_gate: ')}"]
    assert said in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "junit.xml").exists()


def test_the_gate_refuses_port_src_as_plain_pytest_does(tmp_path: Path) -> None:
    gate = _gate("--port=reference", "--port-src=.", f"--out={tmp_path / 'out'}", cwd=tmp_path)
    plain = subprocess.run([sys.executable, "-m", "pytest", "--port=reference", "--port-src=.", "-p", "no:cacheprovider"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)  # fmt: skip
    assert plain.returncode == 4
    assert gate.stderr.strip().removeprefix("ci_gate: ") in plain.stderr


def _results(out: Path) -> None:
    """A results folder as a failing run leaves it: a report and a JUnit file."""
    out.mkdir(parents=True)
    scenario = "relay-single-durable"
    report = {"port": "golang", "library": "toolnexus 0.16.0", "capabilities": [], "gaps": {}, "staleExpectations": [],
              "rules": [{"rule": "relay.calls-in-one-request", "level": "normative", "pass": 1, "fail": 1, "expected": 0,
                         "gap": 0, "notApplicable": 0, "scenarios": 1, "expectedByReason": {}}],
              "failures": {f"{scenario}[openai-run]::relay.calls-in-one-request": {"reason": "divergence", "observed": "two requests"}}}  # fmt: skip
    (out / "report.json").write_text(json.dumps(report), encoding="utf-8")
    (out / "junit.xml").write_text(
        '<testsuites><testsuite><testcase classname="scenarios.relay-single-durable.json" name="relay-single-durable[openai-run]">'
        f'<failure message="scenario relay-single-durable[openai-run] on port golang:&#10;{LONG_WHY}">x</failure>'
        "</testcase></testsuite></testsuites>",
        encoding="utf-8",
    )


def test_the_summary_gives_runnable_whole_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "results"
    _results(out)
    wheel = tmp_path / "toolnexus_conformance-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    monkeypatch.setenv("TOOLNEXUS_HARNESS", str(wheel))
    run = ci_gate.GateRun("golang", ".", Path("conformance/golang.toml"), out, ["-n", "2", "-k", "relay"])
    text = ci_gate.summary_markdown(run, 1, out / "pytest.log")
    assert f"python -m pip install {wheel}" in text  # the harness this gate ran, by an absolute path
    assert "Selected with `-k relay`" in text and "-n 2" not in text.split("Selected with", 1)[1].splitlines()[0]
    assert "END-OF-LINE" in text  # a failure line is never cut
    rerun = next(line.strip() for line in text.splitlines() if "relay-single-durable.json::" in line and "ci_gate" in line)
    argv = shlex.split(rerun)
    assert argv[:3] == ["python", "-m", "toolnexus_conformance.ci_gate"] and "--port=golang" in argv and "--port-src=." in argv
    target = argv[-1]
    assert target == "scenarios/relay-single-durable.json::relay-single-durable[openai-run]"
    assert (scenarios_dir() / target.split("::")[0].removeprefix("scenarios/")).is_file()
    update = next(line for line in text.splitlines() if "--update-expectations" in line)
    assert shlex.split(update)[-3:] == ["-k", "relay", "--update-expectations"]


def test_a_passing_summary_prints_no_install_noise(tmp_path: Path) -> None:
    out = tmp_path / "results"
    _results(out)
    run = ci_gate.GateRun("golang", ".", None, out, [])
    assert "pip install" not in ci_gate.summary_markdown(run, 0, out / "pytest.log")
