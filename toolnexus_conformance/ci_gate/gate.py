"""The CI gate a port's repository runs (``ci-gate/action.yml`` calls it through
``ci-gate/run_gate.sh``): build the port from the repository under test, run the conformance
suite against it, keep the evidence, and write the summary a maintainer reads first.

    python -m toolnexus_conformance.ci_gate --port=golang --port-src=. --expectations=conformance/golang.toml

It runs ``pytest --port=X --port-src=SRC --expectations=FILE`` isolated from the
repository's own pytest configuration, and leaves in ``--out`` (default
``conformance-results``): ``junit.xml``, ``artifacts/`` (each failing variant's JSON-RPC
lines, provider exchanges and shim stderr), ``report.json``/``report.md`` (the per-rule
matrix), ``parity.html`` (the report to look at: ``toolnexus_conformance.reports.parity_html``), ``pytest.log``
and ``summary.md``. The summary (one line for the port, its failing rules each with a
reproduce command, the failed tests each with theirs, how to accept the run as the
expectations, the matrix folded below) is also appended to ``$GITHUB_STEP_SUMMARY`` when
that is set. Every command in it runs as printed in the repository under test once the
harness is installed there, and the summary opens with that one-line install (the harness
``run_gate.sh`` installed, ``$TOOLNEXUS_HARNESS``). The exit code is pytest's: 0 only when
every rule passed or failed exactly as the expectations file says (or when
``--update-expectations`` wrote what the run saw).

The python port is served from PyPI; with ``--port-src`` it is built from the repository
under test instead (``toolnexus_conformance/shim/ports.toml``); ports whose shim builds from no source reject
``--port-src``, with the plugin's own words.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.plugin.usage import XDIST_HINT, xdist_installed
from toolnexus_conformance.reports import parity_html
from toolnexus_conformance.reports.parity_summary import render_summary, summarize
from toolnexus_conformance.reports.run_report import markdown
from toolnexus_conformance.shim.ports import PortError, check_choice

LOG_TAIL = 40
FAILED_SHOWN = 15
HARNESS_ENV = "TOOLNEXUS_HARNESS"
# pytest options that choose how a run is spread, not what it runs.
NOT_SELECTION = ("-n", "--numprocesses", "--dist", "--maxprocesses", "-p", "-q", "-v", "-x")


class GateError(Exception):
    """The gate cannot start: a bad option, a missing file, a port it cannot build."""


@dataclass(frozen=True)
class GateRun:
    port: str
    port_src: str | None  # as the user wrote it (shown in reproduce commands)
    expectations: Path | None
    out: Path
    pytest_args: list[str]


def pytest_command(run: GateRun) -> list[str]:
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
    if run.port_src:
        argv.append(f"--port-src={run.port_src}")
    if run.expectations:
        # As the user wrote it (pytest runs in the same folder): it lands in update hints.
        argv.append(f"--expectations={run.expectations}")
    return argv + run.pytest_args


def check(run: GateRun) -> None:
    """What the plugin would refuse, said before anything is built (in the plugin's words)."""
    try:
        check_choice(run.port, run.port_src)
    except PortError as exc:
        raise GateError(str(exc)) from None
    if run.port_src is not None and not Path(run.port_src).is_dir():
        raise GateError(f"--port-src={run.port_src}: no such folder")
    if any(arg in ("-n", "--numprocesses") or arg.startswith(("-n", "--numprocesses=")) for arg in run.pytest_args):
        if not xdist_installed():
            raise GateError(f"-n runs the suite in parallel with pytest-xdist, which is not installed here: {XDIST_HINT}")
    missing = run.expectations is not None and not run.expectations.is_file()
    if missing and "--update-expectations" not in run.pytest_args:
        raise GateError(f"--expectations={run.expectations}: no such file (create it with --update-expectations)")


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
    selection = selection_args(run.pytest_args)
    if selection:
        lines += [f"Selected with `{shlex.join(selection)}`: rules outside the selection count as not exercised.", ""]
    if exit_code != 0:
        lines += reproduce_here(run)
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
        lines += ["", f"**{len(failed)} failed test{'s' if len(failed) != 1 else ''}**, each with the command that reruns it "
                  "(details in `junit.xml`):", ""]  # fmt: skip
        for name, why in failed[:FAILED_SHOWN]:
            lines += [f"- `{name}`: {why}", "", "  ```sh", f"  {gate_command(run, [test_selector(name)])}", "  ```"]
        if len(failed) > FAILED_SHOWN:
            lines.append(f"- … and {len(failed) - FAILED_SHOWN} more (all in `junit.xml`)")
        if run.expectations is not None:
            lines += ["", f"If these failures are what the port does now, record them in `{run.expectations}` "
                      "(the command says what it wrote, and exits 0):", "",
                      "```sh", gate_command(run, [*selection_args(run.pytest_args), "--update-expectations"]), "```"]  # fmt: skip
    lines += ["", f"Evidence: `{run.out}/junit.xml`, failing variants in `{run.out}/artifacts/`, full log `{run.out}/pytest.log`; "
              f"the report to look at (matrix, root causes, diffs): `{run.out}/{HTML_NAME}`."]  # fmt: skip
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
            failed.append((case.get("name", "?"), first.replace("`", "'")))
    return failed


HTML_NAME = "parity.html"


def selection_args(pytest_args: list[str]) -> list[str]:
    """The pytest options that select what runs (not -n N and the like, which spread it)."""
    kept: list[str] = []
    skip_value = False
    for arg in pytest_args:
        if skip_value:
            skip_value = False
            continue
        flag = arg.split("=", 1)[0]
        if flag in NOT_SELECTION or (arg.startswith("-n") and arg[2:].isalnum()):
            skip_value = "=" not in arg and flag in ("-n", "--numprocesses", "--dist", "--maxprocesses", "-p")
            continue
        kept.append(arg)
    return kept


def test_selector(name: str) -> str:
    """A failed test's name (``scenario[variant]``) as the argument that selects it again:
    its scenario file by the short id the plugin understands (``scenarios/<file>``)."""
    scenario = name.split("[", 1)[0]
    return f"scenarios/{scenario}.json::{name}"


def gate_base(run: GateRun) -> list[str]:
    parts = ["python", "-m", "toolnexus_conformance.ci_gate", f"--port={run.port}"]
    if run.port_src:
        parts.append(f"--port-src={run.port_src}")
    if run.expectations is not None:
        parts.append(f"--expectations={run.expectations}")
    return parts


def gate_command(run: GateRun, pytest_args: list[str]) -> str:
    """This gate again, as typed in the repository under test, with these pytest options."""
    return shlex.join([*gate_base(run), "--", *pytest_args])


def rerun_prefix(run: GateRun) -> str:
    return shlex.join(gate_base(run)) + " --"


def install_line() -> str:
    """The one-line install of the harness this gate runs, as a maintainer types it."""
    given = os.environ.get(HARNESS_ENV, "").strip()
    if not given:
        return "python -m pip install toolnexus-conformance  # the harness (no TOOLNEXUS_HARNESS was given)"
    path, extra = given, ""
    if "[" in given and given.endswith("]"):
        path, extra = given[: given.index("[")], given[given.index("[") :]
    if Path(path).exists():
        given = str(Path(path).resolve()) + extra
    return shlex.join(["python", "-m", "pip", "install", given])


def reproduce_here(run: GateRun) -> list[str]:
    return [
        "To run the commands below in the repository under test, install the harness this gate ran first:",
        "",
        "```sh",
        install_line(),
        "```",
        "",
    ]


def write_html(run: GateRun) -> None:
    """The HTML report beside the summary (nothing when the run wrote no report)."""
    report = run.out / "report.json"
    if report.is_file():
        parity_html.main([str(report), "-o", str(run.out / HTML_NAME)])


def gate(run: GateRun) -> int:
    run.out.mkdir(parents=True, exist_ok=True)
    (run.out / "gate-pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    log_path = run.out / "pytest.log"
    log_path.write_text("", encoding="utf-8")
    for stale in ("report.json", "report.md", "junit.xml", HTML_NAME):
        (run.out / stale).unlink(missing_ok=True)
    return run_pytest(pytest_command(run), log_path)


def write_summary(text: str, out: Path) -> None:
    (out / "summary.md").write_text(text, encoding="utf-8")
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(text)


def parse(argv: list[str] | None) -> GateRun:
    parser = argparse.ArgumentParser(prog="python -m toolnexus_conformance.ci_gate", description=__doc__.splitlines()[0])
    parser.add_argument("--port", required=True, help="the port under test (toolnexus_conformance/shim/ports.toml)")
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
    write_html(run)
    write_summary(summary_markdown(run, exit_code, run.out / "pytest.log"), run.out)
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main())
