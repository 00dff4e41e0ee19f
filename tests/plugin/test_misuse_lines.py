"""Each command-line mistake a port maintainer makes is one line saying what to do (pytest's
``ERROR:`` line, exit code 4), never a traceback, a "not found" for a file that exists or
"no tests ran": a scenario named without --port, a symlink loop, --port with --port-cmd,
--port-src where it does not apply, -n without pytest-xdist; and --update-expectations says
what it wrote and exits 0 when it wrote what the run saw. Run from a folder outside this
repository, as a port's repository would."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from plugin_runner import SCENARIO, run_pytest

from toolnexus_conformance.plugin.usage import requested_workers

ERROR = re.compile(r"^ERROR: (.*)$", re.MULTILINE)


def _one_error(output: str) -> str:
    found = ERROR.findall(output)
    assert len(found) == 1 and "Traceback" not in output, output[-3000:]
    return found[0]


@pytest.mark.parametrize("argument", [str(SCENARIO), str(SCENARIO.parent), f"{SCENARIO}::relay-single-durable[openai-run]"])
def test_a_scenario_without_a_port_says_to_add_one(argument: str, tmp_path: Path) -> None:
    run = run_pytest(argument, cwd=tmp_path)
    assert run.code == 4
    assert "scenario files run against a port: add --port=reference" in _one_error(run.output)


@pytest.mark.parametrize("links", [{"loop.json": "loop.json"}, {"a.json": "b.json", "b.json": "a.json"}])
def test_a_symlink_loop_is_named(links: dict[str, str], tmp_path: Path) -> None:
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    first = next(iter(links))
    for port in ([], ["--port=reference"]):
        run = run_pytest(first, *port, cwd=tmp_path)
        assert run.code == 4
        assert _one_error(run.output) == f"{first}: a symlink loop (it points back at itself); name the scenario file it should point to"


def test_port_and_port_cmd_together_are_refused(tmp_path: Path) -> None:
    run = run_pytest("--port=reference", "--port-cmd=python shim.py", cwd=tmp_path)
    assert run.code == 4
    assert "--port=reference and --port-cmd both choose the shim to start: give one of them" in _one_error(run.output)


def test_port_src_for_a_port_that_builds_from_no_checkout_is_refused(tmp_path: Path) -> None:
    run = run_pytest("--port=reference", f"--port-src={tmp_path}", cwd=tmp_path)
    assert run.code == 4
    assert "does not build from a toolnexus checkout, so --port-src would be ignored; drop it" in _one_error(run.output)


def test_n_without_xdist_says_what_to_install(tmp_path: Path) -> None:
    hide = tmp_path / "hide-xdist"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['xdist'] = None  # as if not installed\n", encoding="utf-8")
    run = run_pytest("-p", "toolnexus_conformance.plugin.hooks", "--port=reference", "-n", "2", cwd=tmp_path,
                     env_extra={"PYTHONPATH": str(hide), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # fmt: skip
    assert run.code == 4
    assert _one_error(run.output).startswith("-n 2 runs tests in parallel with pytest-xdist, which is not installed here: pip install pytest-xdist")


@pytest.mark.parametrize(
    ("args", "workers"),
    [(["-n", "2"], "2"), (["-n2"], "2"), (["-n=auto"], "auto"), (["--numprocesses", "3"], "3"),
     (["--numprocesses=auto"], "auto"), (["-q", "--port=reference"], None), (["--", "-n", "2"], None)],
)
def test_the_workers_asked_for_are_read_off_the_command_line(args: list[str], workers: str | None) -> None:
    assert requested_workers(args) == workers


def test_update_expectations_says_what_it_wrote_and_exits_0(tmp_path: Path) -> None:
    expectations = tmp_path / "reference.toml"
    stale = "relay-single-durable[openai-run]::relay.calls-in-one-request"
    expectations.write_text(f'port = "reference"\n[[expected]]\nkey = "{stale}"\nreason = "divergence"\n', encoding="utf-8")
    args = (str(SCENARIO), "--port=reference", f"--expectations={expectations}")
    before = run_pytest(*args, "-q", cwd=tmp_path)
    assert before.code == 1 and "passes now but is listed as an expected failure" in before.output
    printed = re.search(r"update the file: (.*)$", before.output, re.MULTILINE)
    assert printed is not None
    assert printed[1] == f"python -m pytest --port=reference --expectations={expectations} --update-expectations"
    updated = run_pytest(str(SCENARIO), *printed[1].split()[3:], "-q", cwd=tmp_path)
    assert updated.code == 0, updated.output[-3000:]
    assert f"wrote {expectations}: 0 expected failure(s) this run saw (0 added, 1 removed, 0 kept)" in updated.output
    assert stale not in expectations.read_text(encoding="utf-8")
    assert run_pytest(*args, "-q", cwd=tmp_path).code == 0
