"""The README's commands, run or checked against what runs them: the quickstart is three
short blocks (install, main job, tests); the main job collects the suite as printed; the
test command is the one .ci/run runs; the install names extras pyproject.toml defines; the
HTML report command writes its page. (docs/running.md has the rest.)"""

from __future__ import annotations

import glob
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)]


def test_the_quickstart_is_three_one_line_blocks() -> None:
    blocks = _blocks(_section("Quickstart"))
    assert len(blocks) == 3 and all("\n" not in b for b in blocks), blocks
    install, main_job, tests = blocks
    assert "pip install" in install and main_job == "python -m pytest --port=reference"
    assert tests == "python -m pytest -n auto tests fixtures/scenarios --port=reference"


def test_the_install_names_extras_the_project_defines() -> None:
    install = _blocks(_section("Quickstart"))[0]
    extras = set(re.findall(r"\.\[([^\]]+)\]", install)[0].split(","))
    defined = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras <= set(defined)


def test_the_test_command_is_the_one_ci_runs() -> None:
    tests = _blocks(_section("Quickstart"))[2]
    assert tests in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_main_job_runs_as_printed() -> None:
    main_job = shlex.split(_blocks(_section("Quickstart"))[1])
    assert main_job[:3] == ["python", "-m", "pytest"]
    # Collected as printed (--collect-only: the run itself is the test command's).
    done = subprocess.run([sys.executable, *main_job[1:], "--collect-only", "-q", "-p", "no:randomly"],
                          capture_output=True, text=True, cwd=REPO, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"^\d{3,} tests collected", done.stdout, re.MULTILINE), done.stdout[-2000:]


def test_the_html_report_command_writes_its_page(tmp_path: Path) -> None:
    command = next(b for b in _blocks(_section("Use it in a port's repository")) if "toolnexus_conformance.reports.parity_html" in b)
    argv = shlex.split(command)
    expanded = [p for arg in argv[3:] for p in (sorted(glob.glob(str(REPO / arg))) if "*" in arg else [arg])]
    done = subprocess.run([sys.executable, "-m", "toolnexus_conformance.reports.parity_html", *expanded], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "parity.html").read_text(encoding="utf-8").startswith("<!doctype html>")
