"""One process of an xdist run hosts the mutants' pass; the others read its reports from
the shared folder as they land, and say so when the host stops writing them."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import kill_pool
from kill_runner import KillReport, KillRun


def _write(shared: Path, report: KillReport) -> None:
    (shared / f"{report.mutant}.json").write_text(json.dumps(asdict(report)), encoding="utf-8")


def test_only_the_first_process_to_ask_hosts_the_pass(tmp_path: Path) -> None:
    assert kill_pool.claim_host(tmp_path / "shared")
    assert not kill_pool.claim_host(tmp_path / "shared")


def test_a_watched_report_is_the_one_the_host_wrote(tmp_path: Path) -> None:
    written = KillReport("retry-twice", [KillRun(("fixtures/scenarios/a.json",), 1, "1 failed", 0.5, {"failures": {}})])
    with kill_pool.watch_reports(["retry-twice", "later"], tmp_path) as futures:
        _write(tmp_path, written)
        assert futures["retry-twice"].result(timeout=30) == written
        assert not futures["later"].done()
    assert futures["later"].cancelled()  # the session ended before the host wrote it


def test_a_host_that_stops_writing_times_the_rest_out(tmp_path: Path) -> None:
    with kill_pool.watch_reports(["never-written"], tmp_path, timeout_s=0.3) as futures:
        report = futures["never-written"].result(timeout=30)
    assert report.run.returncode == -1 and "timed out waiting for another worker's run" in report.run.output
