"""The pytest plugin (entry point ``pytest11: toolnexus_conformance``).

Options, session setup and collection only: ``--port``/``--port-cmd`` turn scenario files
into test items (``plugin/items.py``); the per-rule summary and reports are ``reports/run_report.py``'s. Without
``--port`` or ``--port-cmd`` the plugin stays out of the way, so the harness's own tests
and any other suite run unchanged.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Generator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.cross import resume as cross_resume
from toolnexus_conformance.golden.files import delete_goldens, orphan_goldens
from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.plugin.collection import (
    expand_short_arguments,
    is_explicit_argument,
    is_scenarios_folder,
    real_path,
    scenario_file,
    scenario_ids,
    scenarios_folder,
)
from toolnexus_conformance.plugin.items import SESSION_KEY, ConformanceFailure, VariantItem, restarts_shim
from toolnexus_conformance.plugin.usage import check_arguments, check_xdist_stand_in
from toolnexus_conformance.reports import run_report as report
from toolnexus_conformance.run.counterparts import resolve_baseline
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import PortError, ResolvedPort, resolve
from toolnexus_conformance.verdict.expectations import Expectations, ExpectationsError, load, write
from toolnexus_conformance.verdict.run_completeness import RunShape, incomplete_reason
from toolnexus_conformance.verdict.selection import load_rules
from toolnexus_conformance.verdict.session import ConformanceSession


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
    runs.start = lambda port: port_session(port, env={**os.environ, **port.env} if port.env else None)
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


MIN_VARIANTS_TO_EVALUATE_ASIDE = 100


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
    if _evaluates_aside(session, conformance):
        conformance.start_evaluator()


def _evaluates_aside(session: pytest.Session, conformance: ConformanceSession) -> bool:
    """Whether records are checked in the evaluator process while the next variant runs:
    in a serial run of enough variants to pay for the process's start (an interpreter and
    the rules, on the other core). An xdist worker keeps its core's share busy already; goldens being
    written and the cross-port run (its own items) judge in pytest's process."""
    config = session.config
    if hasattr(config, "workerinput") or config.getoption("collectonly") or conformance.update_goldens:
        return False
    if cross_resume.requested(config):
        return False
    return sum(isinstance(item, VariantItem) for item in session.items) >= MIN_VARIANTS_TO_EVALUATE_ASIDE


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if isinstance(item, VariantItem) and isinstance(nextitem, VariantItem):
        conformance: ConformanceSession = item.config.stash[SESSION_KEY]
        if conformance.evaluator is not None:
            item.next_variant = nextitem


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    conformance: ConformanceSession | None = session.config.stash.get(SESSION_KEY, None)
    if conformance is None:
        return
    conformance.close()
    if hasattr(session.config, "workerinput"):
        # An xdist worker: the controller judges the run as a whole.
        session.config.workeroutput["toolnexus_conformance"] = conformance.export()  # type: ignore[attr-defined]
        return
    if session.config.getoption("collectonly"):
        # --collect-only judges nothing: no variant ran, so nothing is orphaned or stale.
        if conformance.update_goldens:
            conformance.kept_goldens_reason = incomplete_reason(conformance.coverage, _run_shape(session, conformance, exitstatus))
        return
    _judge_orphans(session, conformance, exitstatus)
    coverage = conformance.coverage
    if session.config.getoption("update_expectations") and conformance.expectations.path is not None:
        # (pytest_configure refuses --update-expectations without --expectations.)
        # Entries this run did not judge are carried over unchanged: those of scenarios not
        # every variant of which got a verdict, and those of rules --rule left out.
        kept = {
            key: (e.reason, e.note)
            for e in conformance.expectations.entries
            for key in e.keys
            if not coverage.fully_judged(key.split("[", 1)[0]) or not conformance.selected(key.split("::", 1)[-1])
        }
        observed = {**kept, **conformance.observed_failures}
        write(
            conformance.expectations.path,
            conformance.port.name,
            observed,
            conformance.expectations,
            regenerate=_regenerate_command(session.config, conformance),
        )
        session.config.stash[UPDATED_KEY] = _what_was_written(conformance.expectations)
    elif not _filtered(session, conformance) and conformance.expectations.path is not None:
        # An entry is stale when every variant of its scenario got a verdict and it matched nothing.
        conformance.stale_entries = [
            e.key for e in conformance.expectations.unmatched() if all(coverage.fully_judged(k.split("[", 1)[0]) for k in e.keys)
        ]
        if conformance.stale_entries:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    target = session.config.getoption("conformance_report")
    if target and cross_resume.CROSS_KEY in session.config.stash:
        from toolnexus_conformance.plugin.cross_hooks import write_cross_report

        write_cross_report(session.config, Path(target))
    elif target:
        report.write_reports(conformance, Path(target))


class _VerdictRecorder:
    """Registered for a conformance run: notes which scenarios were defined and which variants
    got a verdict, the evidence ``run_completeness`` judges a run's completeness on."""

    def __init__(self, conformance: ConformanceSession, config: pytest.Config) -> None:
        self._coverage = conformance.coverage
        self._context = conformance.failure_context
        # An xdist controller learns verdicts from its workers' exports: the reports it is
        # forwarded include the ones it makes up for a crashed worker's item.
        self._from_workers = _distributing(config)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._coverage.collection_errors += 1
            return
        for item in report.result:
            variant = getattr(item, "variant", None)
            if variant is not None:
                self._coverage.define(variant.scenario.id, [v.name for v in variant.scenario.variants()])
                return

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A variant has its verdict once its call ran, or its setup failed or skipped it.
        A failed variant's shim stderr and rerun command are kept from its failure text
        (here on the xdist controller too, which is handed every report)."""
        if report.when == "call" and report.failed and not hasattr(report, "wasxfail"):
            context = failure_context(str(report.longrepr))
            if context:
                self._context[report.nodeid.rsplit("::", 1)[-1]] = context
        if self._from_workers or not (report.when == "call" or (report.when == "setup" and not report.passed)):
            return
        name = report.nodeid.rsplit("::", 1)[-1]
        if name.endswith("]") and "[" in name:
            scenario_id, variant = name[:-1].split("[", 1)
            self._coverage.judge(scenario_id, variant)


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


UPDATED_KEY = pytest.StashKey[str]()


def _update_command(conformance: ConformanceSession) -> str:
    """The command that rewrites the expectations file from a run, as printed under an
    unexpected pass: runnable as is (the port's options as this run was given them)."""
    return " ".join(
        ["python -m pytest", conformance.port.selector, f"--expectations={conformance.expectations.path}", "--update-expectations"]
    )


def _what_was_written(previous: Expectations) -> str:
    """One line: the file --update-expectations wrote, and how it moved."""
    path = previous.path
    assert path is not None
    before = {e.key for e in previous.entries}
    after = {e.key for e in load(path).entries}
    return (
        f"wrote {path}: {len(after)} expected failure(s) this run saw "
        f"({len(after - before)} added, {len(before - after)} removed, {len(after & before)} kept); "
        "rerun without --update-expectations to check it"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under --update-expectations a variant's failure is what the file is rewritten from:
    reported as an expected failure (recorded), not as a failed test."""
    report = yield
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


def failure_context(text: str) -> dict[str, Any]:
    """From a variant's failure text (``items``): the shim's stderr tail and the rerun command."""
    context: dict[str, Any] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("rerun: "):
            context["rerun"] = line.removeprefix("rerun: ")
        elif line.startswith("shim stderr (tail):"):
            tail = []
            for quoted in lines[i + 1 :]:
                if not quoted.startswith("  | "):
                    break
                tail.append(quoted.removeprefix("  | "))
            context["stderr"] = tail
    return context


def _regenerate_command(config: pytest.Config, conformance: ConformanceSession) -> str:
    src = config.getoption("port_src")
    return " ".join(
        part
        for part in (
            "pytest",
            f"--port={conformance.port.name}",
            # A checkout's absolute path would land in a committed file; name the role instead.
            "--port-src=PATH/TO/toolnexus" if src else "",
            f"--expectations={conformance.expectations.path}",
            "--update-expectations",
        )
        if part
    )


def _filtered(session: pytest.Session, conformance: ConformanceSession) -> bool:
    config = session.config
    return bool(conformance.rule_filters or config.getoption("keyword") or config.getoption("markexpr"))


def _run_shape(session: pytest.Session, conformance: ConformanceSession, exitstatus: int) -> RunShape:
    config = session.config
    filters = [
        f"{flag} {value!r}"
        for flag, value in (("-k", config.getoption("keyword")), ("-m", config.getoption("markexpr")))
        if value
    ] + [f"--rule={pattern!r}" for pattern in conformance.rule_filters]
    return RunShape(
        collect_only=bool(config.getoption("collectonly")),
        interrupted=exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop or session.shouldfail),
        filters=tuple(filters),
        scenario_files=scenario_ids(scenarios_dir()),
    )


def _judge_orphans(session: pytest.Session, conformance: ConformanceSession, exitstatus: int) -> None:
    """Goldens no defined variant owns. Reported for each scenario whose every variant got a
    verdict; deleted by --snapshot-update only after a run that saw the whole suite."""
    coverage = conformance.coverage
    shape = _run_shape(session, conformance, exitstatus)
    incomplete = incomplete_reason(coverage, shape)
    judged = {s: v for s, v in coverage.defined.items() if coverage.fully_judged(s)}
    if shape.filters or shape.interrupted:
        judged = {}
    orphans = orphan_goldens(judged, whole_suite=incomplete is None)
    if conformance.update_goldens:
        if incomplete is None:
            delete_goldens(orphans)
            conformance.deleted_goldens = orphans
        else:
            conformance.kept_goldens_reason = incomplete
    elif orphans:
        conformance.unused_goldens = orphans
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _distributing(config: pytest.Config) -> bool:
    """This process is an xdist controller that hands the tests to workers."""
    dist = config.getoption("dist", default="no")
    return not hasattr(config, "workerinput") and dist not in (None, "no")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    conformance: ConformanceSession | None = config.stash.get(SESSION_KEY, None)
    if conformance is not None:
        report.terminal_summary(terminalreporter, conformance)
        written = config.stash.get(UPDATED_KEY, None)
        if written is not None:
            terminalreporter.write_line(written, green=True)

