"""A port maintainer's session, scripted: a golang port repository whose gate is green breaks
its relay output on purpose, runs the gate, and then does only what the gate printed — the
failed test's rerun, then the expectations update — and reruns the gate: green. Every
command is taken from the job summary and run as printed (with ``python`` the interpreter
that has the harness, as after the printed install). It needs ``go`` and a toolnexus
checkout in ``TOOLNEXUS_SRC`` (copied, never touched); without them it is skipped, saying so.
One scenario's variants keep it to about a minute. A gate: it builds and runs a real port
through the drop-in CI gate, as tests/gates/test_ci_gate_end_to_end.py does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SELECTION = ["-k", "relay-single-durable"]
BROKEN_FROM = 'const RelayKind = "tool_call"'
BROKEN_TO = 'const RelayKind = "relay_call"'  # the Request kind relay.request-kind pins
pytestmark = pytest.mark.timeout(900)


def _checkout() -> Path:
    src = os.environ.get("TOOLNEXUS_SRC")
    if shutil.which("go") is None:
        pytest.skip("the scripted maintainer session builds the golang port: go is not installed")
    if not src or not (Path(src) / "golang" / "relay.go").is_file():
        pytest.skip("the scripted maintainer session needs a toolnexus checkout in TOOLNEXUS_SRC (its golang/ is copied)")
    return Path(src)


def test_a_red_gate_goes_green_by_following_only_what_it_prints(tmp_path: Path) -> None:
    repo = tmp_path / "toolnexus"
    shutil.copytree(_checkout() / "golang", repo / "golang", ignore=shutil.ignore_patterns(".git"))
    (repo / "conformance").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GITHUB_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", TOOLNEXUS_HARNESS=str(REPO),
               TOOLNEXUS_CONFORMANCE_CACHE=str(tmp_path / "cache"))  # fmt: skip

    def shell(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=600)

    gate = "python -m toolnexus_conformance.ci_gate --port=golang --port-src=. --expectations=conformance/golang.toml -- " + " ".join(SELECTION)
    started = shell(f"{gate} --update-expectations")
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-2000:]
    assert "wrote conformance/golang.toml" in started.stdout
    assert shell(gate).returncode == 0

    relay = repo / "golang" / "relay.go"
    source = relay.read_text(encoding="utf-8")
    assert BROKEN_FROM in source
    relay.write_text(source.replace(BROKEN_FROM, BROKEN_TO), encoding="utf-8")
    red = shell(gate)
    assert red.returncode == 1, red.stdout[-3000:]
    summary = (repo / "conformance-results" / "summary.md").read_text(encoding="utf-8")
    commands = [line.strip() for block in re.findall(r"```sh\n(.*?)```", summary, re.DOTALL) for line in block.splitlines() if line.strip()]
    assert commands[0] == f"python -m pip install {REPO}", summary  # the harness the gate ran, installed in one line
    reruns = [c for c in commands if c.startswith("python -m toolnexus_conformance.ci_gate") and "scenarios/" in c]
    update = [c for c in commands if c.endswith("--update-expectations")]
    assert reruns and len(update) == 1, summary

    rerun = shell(reruns[0])
    assert rerun.returncode == 1 and "[relay.request-kind]" in rerun.stdout, rerun.stdout[-3000:]
    assert "relay_call" in rerun.stdout  # the broken output, in the failure's diff
    updated = shell(update[0])
    assert updated.returncode == 0, updated.stdout[-3000:]
    assert re.search(r"wrote conformance/golang.toml: \d+ expected failure\(s\) this run saw \([1-9]\d* added", updated.stdout)
    green = shell(gate)
    assert green.returncode == 0, green.stdout[-3000:]
    assert "passed" in (repo / "conformance-results" / "summary.md").read_text(encoding="utf-8").splitlines()[0]
    assert (repo / "conformance-results" / "parity.html").is_file()
    assert not (repo / ".cache").exists()  # the build cache stays outside the port's working tree
