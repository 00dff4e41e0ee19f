"""The CI gate a port's repository runs (``ci-gate/action.yml`` calls it through
``ci-gate/run_gate.sh``): build the port from the repository under test, run the conformance
suite against it, keep the evidence, and write the summary a maintainer reads first.

    python -m harness.ci_gate --port=golang --port-src=. --expectations=conformance/golang.toml

It runs ``pytest --port=X --port-src=SRC --expectations=FILE`` isolated from the
repository's own pytest configuration, and leaves in ``--out`` (default
``conformance-results``): ``junit.xml``, ``artifacts/`` (each failing variant's JSON-RPC
lines, provider exchanges and shim stderr), ``report.json``/``report.md`` (the per-rule
matrix), ``pytest.log`` and ``summary.md``. The summary (one line for the port, its failing
rules each with a reproduce command, the matrix folded below) is also appended to
``$GITHUB_STEP_SUMMARY`` when that is set. The exit code is pytest's: 0 only when every
rule passed or failed exactly as the expectations file says.

The python port is served from PyPI; with ``--port-src`` the gate instead installs the
repository under test (a pip-installable ``toolnexus`` package) into a private venv and
drives that. Ports whose shim builds from no source reject ``--port-src``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .parity_summary import render_summary, summarize
from .paths import fixtures_dir, shims_dir
from .ports import cache_dir, load_registry
from .report import markdown

LOG_TAIL = 40
FAILED_SHOWN = 15
PYTHON_SOURCE_PORT = "python"


class GateError(Exception):
    """The gate cannot start: a bad option, a missing file, a port it cannot build."""


@dataclass(frozen=True)
class GateRun:
    port: str
    port_src: str | None  # as the user wrote it (shown in reproduce commands)
    expectations: Path | None
    out: Path
    pytest_args: list[str]


def pytest_command(run: GateRun, port_cmd: str | None) -> list[str]:
    out = run.out.resolve()
    argv = [
        sys.executable, "-m", "pytest",
        # The repository's own pytest configuration (addopts, testpaths, conftest plugins)
        # must not leak into the gate: an empty ini file, rooted in the results folder.
        "-c", str(out / "gate-pytest.ini"), "--rootdir", str(out), "-p", "no:cacheprovider",
        f"--port={run.port}",
        f"--junitxml={out / 'junit.xml'}",
        f"--artifacts={out / 'artifacts'}",
        f"--conformance-report={out / 'report.json'}",
        "-q",
    ]  # fmt: skip
    if port_cmd:
        argv.append(f"--port-cmd={port_cmd}")
    elif run.port_src:
        argv.append(f"--port-src={run.port_src}")
    if run.expectations:
        # As the user wrote it (pytest runs in the same folder): it lands in update hints.
        argv.append(f"--expectations={run.expectations}")
    return argv + run.pytest_args


def check(run: GateRun) -> None:
    registry = load_registry()
    if run.port not in registry:
        raise GateError(f"unknown port {run.port!r}; the harness knows: {', '.join(sorted(registry))}")
    if run.port_src is not None:
        src = Path(run.port_src)
        if not src.is_dir():
            raise GateError(f"--port-src={run.port_src}: no such folder")
        builds_from_source = any("{src}" in part for step in registry[run.port].build for part in step)
        if not builds_from_source and run.port != PYTHON_SOURCE_PORT:
            raise GateError(f"port {run.port!r} does not build from a source checkout; drop --port-src")
    missing = run.expectations is not None and not run.expectations.is_file()
    if missing and "--update-expectations" not in run.pytest_args:
        raise GateError(f"--expectations={run.expectations}: no such file (create it with --update-expectations)")


def python_from_source(src: Path, log: list[str]) -> str:
    """A private venv holding the repository's own ``toolnexus`` package; the shim command."""
    venv = cache_dir() / "python-from-source" / "venv"
    if venv.exists():
        shutil.rmtree(venv)  # rebuilt each time: the source may have changed under the same version
    python = venv / "bin" / "python"
    for argv in ([sys.executable, "-m", "venv", str(venv)],
                 [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(src.resolve())]):  # fmt: skip
        log.append(f"$ {shlex.join(argv)}")
        done = subprocess.run(argv, check=False, capture_output=True, text=True)
        log.append(done.stdout + done.stderr)
        if done.returncode != 0:
            raise GateError(f"cannot install the python port from {src} (exit {done.returncode}): {shlex.join(argv)}\n"
                            + "\n".join(f"  | {line}" for line in (done.stdout + done.stderr).strip().splitlines()[-15:]))
    return shlex.join([str(python), str(shims_dir() / "python" / "shim.py")])


def run_pytest(argv: list[str], log_path: Path) -> int:
    """Run pytest, echoing its output to the CI log as it comes and keeping it whole."""
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"$ {shlex.join(argv)}\n")
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                log.write(line)
        return proc.returncode


def summary_markdown(run: GateRun, exit_code: int, log_path: Path) -> str:
    report_path = run.out / "report.json"
    verdict = "passed" if exit_code == 0 else f"**FAILED** (pytest exit code {exit_code})"
    lines = [f"## toolnexus conformance: port `{run.port}` {verdict}", ""]
    if run.pytest_args:
        lines += [f"Selected with `{shlex.join(run.pytest_args)}`: rules outside the selection count as not exercised.", ""]
    if not report_path.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-LOG_TAIL:] if log_path.is_file() else []
        lines += ["The run ended before it wrote a report. The end of its output:", "", "```", *tail, "```"]
        return "\n".join(lines) + "\n"
    report = json.loads(report_path.read_text(encoding="utf-8"))
    rules = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))["rules"]
    rerun = rerun_prefix(run)
    lines += render_summary([summarize(report, rules, rerun=rerun)])
    failed = failed_tests(run.out / "junit.xml")
    if failed:
        lines += ["", f"**{len(failed)} failed test{'s' if len(failed) != 1 else ''}** (details in `junit.xml`):", ""]
        lines += [f"- `{name}`: {why}" for name, why in failed[:FAILED_SHOWN]]
        if len(failed) > FAILED_SHOWN:
            lines.append(f"- … and {len(failed) - FAILED_SHOWN} more")
    lines += ["", f"Evidence: `{run.out}/junit.xml`, failing variants in `{run.out}/artifacts/`, full log `{run.out}/pytest.log`."]
    lines += ["", "<details><summary>rule matrix</summary>", "", markdown(report), "</details>"]
    return "\n".join(lines) + "\n"


def failed_tests(junit: Path) -> list[tuple[str, str]]:
    """(test name, first line of its failure) for every failed or errored test case."""
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return []
    failed = []
    for case in root.iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            text = (problem.get("message") or problem.text or "").strip()
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            # The harness's text opens with the scenario; the first "[rule] ..." line says what failed.
            first = next((line for line in lines if line.startswith("[")), lines[0] if lines else "")
            failed.append((case.get("name", "?"), first.replace("`", "'")[:200]))
    return failed


def rerun_prefix(run: GateRun) -> str:
    parts = ["python -m harness.ci_gate", f"--port={run.port}"]
    if run.port_src:
        parts.append(f"--port-src={shlex.quote(run.port_src)}")
    return " ".join(parts) + " --"


def gate(run: GateRun) -> int:
    run.out.mkdir(parents=True, exist_ok=True)
    (run.out / "gate-pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    log_path = run.out / "pytest.log"
    log_path.write_text("", encoding="utf-8")
    for stale in ("report.json", "report.md", "junit.xml"):
        (run.out / stale).unlink(missing_ok=True)
    port_cmd = None
    if run.port == PYTHON_SOURCE_PORT and run.port_src:
        notes: list[str] = []
        try:
            port_cmd = python_from_source(Path(run.port_src), notes)
        finally:
            with log_path.open("a", encoding="utf-8") as log:
                log.write("\n".join(notes) + "\n")
    return run_pytest(pytest_command(run, port_cmd), log_path)


def write_summary(text: str, out: Path) -> None:
    (out / "summary.md").write_text(text, encoding="utf-8")
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(text)


def parse(argv: list[str] | None) -> GateRun:
    parser = argparse.ArgumentParser(prog="python -m harness.ci_gate", description=__doc__.splitlines()[0])
    parser.add_argument("--port", required=True, help="the port under test (harness/ports.toml)")
    parser.add_argument("--port-src", help="the repository under test, to build the port from (usually .)")
    parser.add_argument("--expectations", type=Path, help="the port's expectations file (known failures)")
    parser.add_argument("--out", type=Path, default=Path("conformance-results"), help="where results go")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest options (-n auto, -k ..., --rule=...)")
    args = parser.parse_args(argv)
    return GateRun(args.port, args.port_src, args.expectations, args.out, list(args.pytest_args))


def main(argv: list[str] | None = None) -> int:
    run = parse(argv)
    try:
        check(run)
        exit_code = gate(run)
    except GateError as exc:
        print(f"ci_gate: {exc}", file=sys.stderr)
        run.out.mkdir(parents=True, exist_ok=True)
        write_summary(f"## toolnexus conformance: port `{run.port}` **could not run**\n\n```\n{exc}\n```\n", run.out)
        return 2
    write_summary(summary_markdown(run, exit_code, run.out / "pytest.log"), run.out)
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main())
