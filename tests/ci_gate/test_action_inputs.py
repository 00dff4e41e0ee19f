"""The CI gate's composite action (ci-gate/action.yml) hands its inputs to run_gate.sh as
the options they stand for: its shell step, run as GitHub would, against a stand-in script.
Seconds, no package index: part of the test command; the gate run end to end (wheel, venv,
real ports) is tests/gates/test_ci_gate_end_to_end.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _action_run_script() -> str:
    """The `run: |` block of ci-gate/action.yml's gate step, dedented (no YAML parser needed)."""
    lines = (REPO / "ci-gate" / "action.yml").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "run: |") + 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    block = []
    for line in lines[start:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        block.append(line[indent:])
    return "\n".join(block) + "\n"


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"GATE_PORT": "golang", "GATE_PORT_SRC": ".", "GATE_EXPECTATIONS": "conformance/golang.toml", "GATE_PYTEST_ARGS": "-n auto --rule=relay.*"},
         ["--port=golang", "--out=conformance-results", "--port-src=.", "--expectations=conformance/golang.toml", "--", "-n", "auto", "--rule=relay.*"]),
        ({"GATE_PORT": "reference", "GATE_PORT_SRC": "", "GATE_EXPECTATIONS": "", "GATE_PYTEST_ARGS": ""},
         ["--port=reference", "--out=conformance-results", "--"]),
    ],
)  # fmt: skip
def test_action_hands_its_inputs_to_run_gate(inputs: dict[str, str], expected: list[str], tmp_path: Path) -> None:
    """The composite step's shell, run as GitHub would (bash -e -o pipefail), with a stand-in
    run_gate.sh that records its arguments: empty inputs add no option, globs stay unexpanded."""
    (tmp_path / "run_gate.sh").write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$GITHUB_ACTION_PATH/args"\n', encoding="utf-8")
    (tmp_path / "run_gate.sh").chmod(0o755)
    env = {"PATH": os.environ["PATH"], "GITHUB_ACTION_PATH": str(tmp_path), "GATE_RESULTS": "conformance-results", **inputs}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _action_run_script()],
                          check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "args").read_text(encoding="utf-8").splitlines() == expected
