"""The end of a conformance session: what is judged of the run as a whole, from its results
stream and coverage, once every variant has its result.

An xdist worker hands its results to the controller (``ConformanceSession.export``); the
controller (or a serial run) then counts the expectations entries its results were judged
against, reports stale entries and orphan goldens (deleting those under
``--snapshot-update`` after a complete run), rewrites the expectations file under
``--update-expectations``, and writes ``--conformance-report``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.cross import resume as cross_resume
from toolnexus_conformance.golden.files import delete_goldens, orphan_goldens
from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.plugin.collection import scenario_ids
from toolnexus_conformance.reports import run_report as report
from toolnexus_conformance.verdict.expectations import Expectations, ExpectationsError, load, write
from toolnexus_conformance.verdict.run_completeness import RunShape, incomplete_reason
from toolnexus_conformance.verdict.session import ConformanceSession

__all__ = ["UPDATED_KEY", "finish", "terminal_summary"]

# The line --update-expectations prints under the summary: the file it wrote and how it moved.
UPDATED_KEY = pytest.StashKey[str]()


def finish(session: pytest.Session, conformance: ConformanceSession, exitstatus: int) -> None:
    """Judge the run as a whole from its results stream (see the module docstring); on an
    xdist worker, hand the controller the worker's stream instead."""
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
    coverage = conformance.coverage
    for scenario_id, variant in conformance.results.judged():
        coverage.judge(scenario_id, variant)
    _judge_orphans(session, conformance, exitstatus)
    try:
        conformance.count_matches()
    except ExpectationsError as exc:
        conformance.expectations_error = str(exc)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
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
        observed = {**kept, **conformance.observed_failures()}
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



def terminal_summary(terminalreporter: Any, conformance: ConformanceSession, config: pytest.Config) -> None:
    report.terminal_summary(terminalreporter, conformance)
    written = config.stash.get(UPDATED_KEY, None)
    if written is not None:
        terminalreporter.write_line(written, green=True)


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
