"""The pytest plugin (entry point ``pytest11: toolnexus_conformance``).

Options, session setup and collection: ``--port``/``--port-cmd`` turn scenario files into
test items (``plugin/items.py``), each of which appends its result to the session's results
stream; the hooks here also note what the run's coverage needs and fold xdist workers'
streams into the controller's. What is judged of the run as a whole at its end is
``plugin/session_end.py``'s; the per-rule summary and reports are ``reports/run_report.py``'s. Without
``--port`` or ``--port-cmd`` the plugin stays out of the way, so the harness's own tests
and any other suite run unchanged.
"""

from __future__ import annotations

import shlex
from collections.abc import Generator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.cross import resume as cross_resume
from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.plugin import session_end
from toolnexus_conformance.plugin.collection import (
    expand_short_arguments,
    is_explicit_argument,
    is_scenarios_folder,
    real_path,
    scenario_file,
    scenarios_folder,
)
from toolnexus_conformance.plugin.items import ConformanceFailure, VariantItem, restarts_shim
from toolnexus_conformance.plugin.usage import check_arguments, check_xdist_stand_in
from toolnexus_conformance.reports import run_report as report
from toolnexus_conformance.run.counterparts import resolve_baseline
from toolnexus_conformance.shim.ports import PortError, ResolvedPort, resolve
from toolnexus_conformance.verdict.expectations import ExpectationsError, load
from toolnexus_conformance.verdict.selection import load_rules
from toolnexus_conformance.verdict.session import SESSION_KEY, ConformanceSession


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolnexus-conformance", "toolnexus relay-mode conformance")
    group.addoption("--port", help="run the conformance suite against this port (toolnexus_conformance/shim/ports.toml)")
    group.addoption("--port-cmd", help="start this command as an ad-hoc shim instead of a registry port")
    group.addoption("--port-src", help="build the port's shim against this toolnexus checkout")
    group.addoption(
        "--baseline-src",
        help="a checkout of the port's last release before relay, for absent.byte-identical "
        "(default: $TOOLNEXUS_BASELINE_SRC; golang: the golang/v0.10.0 tag)",
    )
    group.addoption(
        "--baseline-cmd",
        help="with --port-cmd: start this command as the ad-hoc shim's build without relay support (absent.byte-identical)",
    )
    group.addoption("--port-timeout", type=float, help="per-call timeout in seconds (default: the port's own)")
    group.addoption("--rule", action="append", default=[], help="only rules matching this glob (repeatable)")
    group.addoption("--expectations", help="the port's expectations file (TOML) of known failures")
    group.addoption("--update-expectations", action="store_true", help="rewrite --expectations from this run")
    group.addoption("--validate-shim", action="store_true", help="validate every shim message against schemas/shim/")
    group.addoption("--artifacts", help="keep JSON-RPC and provider exchanges of each variant in this folder")
    group.addoption(
        "--conformance-report", help="write the JSON report to this path, and the markdown matrix to its .md sibling"
    )
    cross_resume.add_options(group)


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Before pytest parses the command line: ``-n`` without pytest-xdist, said plainly."""
    check_xdist_stand_in(args)


def runs_whole_suite_alone(config: pytest.Config) -> bool:
    """`pytest --port=X` naming no path: it runs the whole conformance suite, not the paths
    the ini file's ``testpaths`` name (the harness's own tests)."""
    port_given = bool(config.getoption("port", default=None) or config.getoption("port_cmd", default=None))
    return port_given and config.args_source != pytest.Config.ArgsSource.ARGS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(*ids): the SPEC.md rule ids (fixtures/rules.json) a test checks")
    port, port_cmd = config.getoption("port"), config.getoption("port_cmd")
    if cross_resume.requested(config) and not (port or port_cmd):
        raise pytest.UsageError("--resume-port needs --port (or --port-cmd): the port that runs the halting phase")
    check_arguments(config, port_given=bool(port or port_cmd))
    if not (port or port_cmd):
        if config.getoption("update_snapshots", default=False) and _collects_scenarios(config):
            raise pytest.UsageError("--snapshot-update needs --port=reference: only the reference writes goldens")
        return
    if config.getoption("update_snapshots", default=False) and (port != "reference" or port_cmd):
        raise pytest.UsageError("--snapshot-update is only allowed with --port=reference: goldens come from the reference")
    if config.getoption("update_expectations") and not config.getoption("expectations"):
        raise pytest.UsageError("--update-expectations needs --expectations=PATH")
    _check_rule_filters(list(config.getoption("rule")))
    try:
        report.check_target(config.getoption("conformance_report"))
        resolved = resolve(
            port,
            port_cmd,
            config.getoption("port_src"),
            config.getoption("port_timeout"),
            # The xdist controller configures first and builds once; workers reuse its build.
            build=not hasattr(config, "workerinput"),
        )
        expectations_path = config.getoption("expectations")
        expectations = load(Path(expectations_path)) if expectations_path and Path(expectations_path).exists() else load(None)
        if expectations_path and expectations.path is None:
            expectations.path = Path(expectations_path)
            if not config.getoption("update_expectations"):
                raise ExpectationsError(f"{expectations_path}: no such expectations file")
        expectations.check_port(resolved.expectations_port)
    except (PortError, ExpectationsError, report.ReportPathError) as exc:
        raise pytest.UsageError(str(exc)) from None
    # Goldens are named by variant inside a folder per scenario; syrupy's name heuristic
    # expects the item name in the file name and would warn on every write.
    config.addinivalue_line("filterwarnings", "ignore:(?s).*Can not relate snapshot name:UserWarning")
    artifacts = config.getoption("artifacts")
    config.stash[SESSION_KEY] = ConformanceSession(
        port=resolved,
        expectations=expectations,
        rule_filters=list(config.getoption("rule")),
        validate_shim=bool(config.getoption("validate_shim")),
        artifacts=Path(artifacts) if artifacts else None,
        update_goldens=bool(config.getoption("update_snapshots", default=False)),
        update_expectations=bool(config.getoption("update_expectations")),
    )
    conformance = config.stash[SESSION_KEY]
    conformance.regenerate_command = _update_command(conformance)
    _configure_baseline(config, conformance, port_cmd)
    if cross_resume.requested(config):
        _configure_cross_resume(config, conformance)
    config.pluginmanager.register(_VerdictRecorder(conformance, config), "toolnexus-conformance-verdicts")
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_XdistController(config), "toolnexus-conformance-xdist")
    if runs_whole_suite_alone(config):
        config.args = [str(scenarios_dir())]
    else:
        config.args = expand_short_arguments(list(config.args))


def _configure_baseline(config: pytest.Config, conformance: ConformanceSession, port_cmd: str | None) -> None:
    """The port's build without relay support, for absent.byte-identical (toolnexus_conformance.scenario.relations)."""
    runs = conformance.counterparts
    baseline_cmd = config.getoption("baseline_cmd")
    if port_cmd:
        if baseline_cmd:
            timeout = config.getoption("port_timeout") or conformance.port.timeout
            runs.baseline = ResolvedPort("adhoc-baseline", shlex.split(baseline_cmd), timeout, {})
        else:
            runs.baseline_why = "an ad-hoc shim (--port-cmd) has no build without relay support: give one with --baseline-cmd"
        return
    if baseline_cmd:
        raise pytest.UsageError("--baseline-cmd goes with --port-cmd; a registry port names its baseline in ports.toml")
    runs.baseline, runs.baseline_why = resolve_baseline(
        conformance.port.name, config.getoption("baseline_src"), build=not hasattr(config, "workerinput")
    )


def _configure_cross_resume(config: pytest.Config, conformance: ConformanceSession) -> None:
    """A cross-port run judges each failure by the expectations of the port that ran its
    phase (``cross_item``), so the session's own ratchet holds no entry to go stale."""
    from toolnexus_conformance.plugin.cross_hooks import CrossResumePlugin

    cross = cross_resume.configure(config, conformance.port, conformance.expectations)
    if conformance.validate_shim:
        from toolnexus_conformance.shim.validation import validate_message

        cross.validator = validate_message
    conformance.expectations = load(None)
    config.stash[cross_resume.CROSS_KEY] = cross
    config.pluginmanager.register(CrossResumePlugin(config), "toolnexus-conformance-cross-resume")


def _under_scenarios(config: pytest.Config) -> list[bool]:
    """For each argument: does it name the scenarios folder or something inside it?"""
    root = real_path(scenarios_dir())
    paths = [real_path(Path(a.split("::")[0])) for a in config.args]
    return [root is not None and p is not None and (p == root or root in p.parents) for p in paths]


def _collects_scenarios(config: pytest.Config) -> bool:
    return any(_under_scenarios(config))


def _only_scenarios(config: pytest.Config) -> bool:
    arguments = _under_scenarios(config)
    return bool(arguments) and all(arguments)


def _check_rule_filters(filters: list[str]) -> None:
    """A --rule glob that names no rule would run nothing and say so in 95 lines."""
    known = load_rules()
    for pattern in filters:
        if not any(fnmatchcase(rule, pattern) for rule in known):
            prefixes = sorted({rule.split(".", 1)[0] + ".*" for rule in known})
            raise pytest.UsageError(
                f"--rule={pattern!r} matches no rule id in fixtures/rules.json (rule families: {', '.join(prefixes)})"
            )


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if SESSION_KEY in parent.config.stash and is_scenarios_folder(path):
        return scenarios_folder(parent, path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A scenario file named on the command line outside the scenarios folder (those inside
    it are ScenariosFolder's)."""
    if SESSION_KEY not in parent.config.stash or file_path.suffix != ".json":
        return None
    if not is_explicit_argument(parent.config, file_path):
        return None
    return scenario_file(parent, file_path)


def pytest_sessionstart(session: pytest.Session) -> None:
    conformance: ConformanceSession | None = session.config.stash.get(SESSION_KEY, None)
    config = session.config
    if conformance is None or config.getoption("collectonly"):
        return
    if hasattr(config, "workerinput"):
        conformance.stops_on_dead_shim = False  # the controller probed the shim before starting workers
    if config.pluginmanager.has_plugin("dsession"):
        if not cross_resume.requested(config):
            _probe_shim(config, conformance)
        return  # the xdist controller runs no variant itself
    if cross_resume.requested(config) or not _only_scenarios(config):
        # The cross-port run starts its two shims itself; a session that also runs other
        # tests may run them first, and a shim idling beside them is not theirs to see.
        return
    conformance.start_shim_ahead()


def _probe_shim(config: pytest.Config, conformance: ConformanceSession) -> None:
    """One shim start on the xdist controller, so a shim that cannot start stops the run
    once, its stderr shown once (pytest repeats an exit's reason from here: keep it short)."""
    try:
        conformance.probe_shim()
    except pytest.exit.Exception as stop:
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(str(stop.msg), red=True)
        pytest.exit(f"the shim of port {conformance.port.name} cannot start (its stderr is above)", returncode=stop.returncode)


def pytest_collection_finish(session: pytest.Session) -> None:
    conformance: ConformanceSession | None = session.config.stash.get(SESSION_KEY, None)
    if conformance is None:
        return
    if not hasattr(session.config, "workerinput"):
        # An xdist worker holds every item but runs a share of them: spares spawned for all
        # the restarts would mostly idle, so a worker spawns one only as a variant asks.
        conformance.restart_needs = [
            item.variant.requires for item in session.items if isinstance(item, VariantItem) and restarts_shim(item)
        ]


class _VerdictRecorder:
    """Registered for a conformance run: notes which scenarios were defined (the variants
    that got a verdict are the results stream's), the evidence ``run_completeness`` judges a
    run's completeness on."""

    def __init__(self, conformance: ConformanceSession, config: pytest.Config) -> None:
        self._coverage = conformance.coverage

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._coverage.collection_errors += 1
            return
        for item in report.result:
            variant = getattr(item, "variant", None)
            if variant is not None:
                self._coverage.define(variant.scenario.id, [v.name for v in variant.scenario.variants()])
                return


class _XdistController:
    """Registered on the xdist controller: folds each worker's results into its session."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        conformance = self._config.stash[SESSION_KEY]
        data = getattr(node, "workeroutput", {}).get("toolnexus_conformance")
        if data is not None:
            conformance.merge(data)
        if error is not None or data is None:
            conformance.coverage.crashed_workers += 1


def _update_command(conformance: ConformanceSession) -> str:
    """The command that rewrites the expectations file from a run, as printed under an
    unexpected pass: runnable as is (the port's options as this run was given them)."""
    return " ".join(
        ["python -m pytest", conformance.port.selector, f"--expectations={conformance.expectations.path}", "--update-expectations"]
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A variant that ended without a result (its setup failed or skipped it, its call
    raised before the pipeline gave one) still counts as judged for the run's coverage.
    Under --update-expectations a variant's failure is what the file is rewritten from:
    reported as an expected failure (recorded), not as a failed test."""
    report = yield
    ended_without_result = (call.when == "setup" and not report.passed) or (
        call.when == "call" and call.excinfo is not None and not call.excinfo.errisinstance(ConformanceFailure)
    )
    if ended_without_result and isinstance(item, VariantItem) and SESSION_KEY in item.config.stash:
        # A variant whose setup failed or skipped it, or whose call raised before the
        # pipeline gave a result: it got its verdict all the same (run_completeness).
        item.config.stash[SESSION_KEY].coverage.judge(item.variant.scenario.id, item.variant.name)
    if (
        call.when == "call"
        and report.failed
        and call.excinfo is not None
        and call.excinfo.errisinstance(ConformanceFailure)
        and item.config.getoption("update_expectations", default=False)
        and SESSION_KEY in item.config.stash
    ):
        report.outcome = "skipped"
        report.wasxfail = f"recorded in {item.config.getoption('expectations')}"
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    conformance: ConformanceSession | None = session.config.stash.get(SESSION_KEY, None)
    if conformance is not None:
        session_end.finish(session, conformance, exitstatus)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    conformance: ConformanceSession | None = config.stash.get(SESSION_KEY, None)
    if conformance is not None:
        session_end.terminal_summary(terminalreporter, conformance, config)
