"""The pytest plugin (entry point ``pytest11: toolnexus_conformance``).

Options, session setup and collection only: ``--port``/``--port-cmd`` turn scenario files
into test items (``items.py``); the per-rule summary and reports are ``report.py``'s. Without
``--port`` or ``--port-cmd`` the plugin stays out of the way, so the harness's own tests
and any other suite run unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import report
from .expectations import ExpectationsError, load, write
from .golden import unused_goldens
from .items import SESSION_KEY, ScenarioFile
from .paths import scenarios_dir
from .ports import PortError, resolve
from .session import ConformanceSession


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolnexus-conformance", "toolnexus relay-mode conformance")
    group.addoption("--port", help="run the conformance suite against this port (harness/ports.toml)")
    group.addoption("--port-cmd", help="start this command as an ad-hoc shim instead of a registry port")
    group.addoption("--port-src", help="build the port's shim against this toolnexus checkout")
    group.addoption("--port-timeout", type=float, help="per-call timeout in seconds (default: the port's own)")
    group.addoption("--rule", action="append", default=[], help="only rules matching this glob (repeatable)")
    group.addoption("--expectations", help="the port's expectations file (TOML) of known failures")
    group.addoption("--update-expectations", action="store_true", help="rewrite --expectations from this run")
    group.addoption("--validate-shim", action="store_true", help="validate every shim message against schemas/shim/")
    group.addoption("--artifacts", help="keep JSON-RPC and provider exchanges of each variant in this folder")
    group.addoption("--conformance-report", help="write a JSON report here (and a markdown matrix beside it)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(*ids): the SPEC.md rule ids (fixtures/rules.json) a test checks")
    port, port_cmd = config.getoption("port"), config.getoption("port_cmd")
    if not (port or port_cmd):
        if config.getoption("update_snapshots", default=False) and _collects_scenarios(config):
            raise pytest.UsageError("--snapshot-update needs --port=reference: only the reference writes goldens")
        return
    if config.getoption("update_snapshots", default=False) and (port != "reference" or port_cmd):
        raise pytest.UsageError("--snapshot-update is only allowed with --port=reference: goldens come from the reference")
    if config.getoption("update_expectations") and not config.getoption("expectations"):
        raise pytest.UsageError("--update-expectations needs --expectations=PATH")
    try:
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
    except (PortError, ExpectationsError) as exc:
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
    conformance.regenerate_command = _regenerate_command(config, conformance)
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_XdistController(config), "toolnexus-conformance-xdist")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # `pytest --port=X` alone runs the whole suite, not the harness's own tests.
        config.args = [str(scenarios_dir())]


def _collects_scenarios(config: pytest.Config) -> bool:
    return any(str(scenarios_dir()) in str(Path(a).resolve()) for a in config.args)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if SESSION_KEY not in parent.config.stash or file_path.suffix != ".json":
        return None
    if file_path.parent.resolve() != scenarios_dir().resolve() and not _explicit(parent.config, file_path):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


def _explicit(config: pytest.Config, file_path: Path) -> bool:
    return any(Path(a.split("::")[0]).resolve() == file_path.resolve() for a in config.args)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    conformance: ConformanceSession | None = session.config.stash.get(SESSION_KEY, None)
    if conformance is None:
        return
    conformance.close()
    if hasattr(session.config, "workerinput"):
        # An xdist worker: the controller judges the run as a whole.
        session.config.workeroutput["toolnexus_conformance"] = conformance.export()  # type: ignore[attr-defined]
        return
    filtered = bool(conformance.rule_filters or session.config.getoption("keyword"))
    if not filtered:
        whole = all(Path(a.split("::")[0]).resolve() == scenarios_dir().resolve() for a in session.config.args)
        unused = unused_goldens(conformance.golden_variants, whole_suite=whole)
        if conformance.update_goldens:
            _delete(unused)  # regenerating: goldens no variant owns are dropped, as syrupy does
        elif unused:
            conformance.unused_goldens = unused
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if session.config.getoption("update_expectations"):
        # Entries of scenarios this run did not touch are carried over unchanged.
        kept = {
            e.key: (e.reason, e.note)
            for e in conformance.expectations.entries
            if e.key.split("[", 1)[0] not in conformance.scenarios_run
        }
        observed = {**kept, **conformance.observed_failures}
        write(
            conformance.expectations.path,
            conformance.port.name,
            observed,
            conformance.expectations,
            regenerate=conformance.regenerate_command,
        )
    elif not filtered and conformance.expectations.path is not None:
        # An entry is stale when its scenario ran unfiltered and the entry matched nothing.
        ran = conformance.scenarios_run
        conformance.stale_entries = [e.key for e in conformance.expectations.unmatched() if e.key.split("[", 1)[0] in ran]
        if conformance.stale_entries:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    target = session.config.getoption("conformance_report")
    if target:
        report.write_reports(conformance, Path(target))


class _XdistController:
    """Registered on the xdist controller: folds each worker's results into its session."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        data = getattr(node, "workeroutput", {}).get("toolnexus_conformance")
        if data is not None:
            self._config.stash[SESSION_KEY].merge(data)


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


def _delete(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir():
            for child in path.glob("*.json"):
                child.unlink()
            path.rmdir()
        else:
            path.unlink()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    conformance: ConformanceSession | None = config.stash.get(SESSION_KEY, None)
    if conformance is not None:
        report.terminal_summary(terminalreporter, conformance)

