"""--snapshot-update deletes an orphan golden only after a run that saw the whole suite;
every other run keeps every golden and says why. --collect-only judges nothing.

Each test plants two orphans in a private fixtures tree (a variant file no variant owns,
and the folder of a scenario that no longer exists) and runs the plugin in-process."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from inprocess import private_suite, run
from plugin_runner import add_scenario, private_fixtures, run_pytest, snapshot_tree

pytest_plugins = ["pytester"]

SCENARIO_ID = "relay-single-durable"
KEPT = "--snapshot-update deleted no golden: orphans are judged only after a complete run, and"


def _suite_with_orphans(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    fixtures = private_suite(pytester, monkeypatch, SCENARIO_ID)
    golden = fixtures / "golden"
    orphan_file = golden / SCENARIO_ID / "openai-orphan.json"
    shutil.copy(golden / SCENARIO_ID / "openai-run.json", orphan_file)
    orphan_folder = golden / "scenario-that-was-deleted"
    orphan_folder.mkdir()
    shutil.copy(golden / SCENARIO_ID / "openai-run.json", orphan_folder / "openai-run.json")
    return fixtures, orphan_file, orphan_folder


def test_collect_only_judges_nothing_and_deletes_nothing(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    fixtures, _, _ = _suite_with_orphans(pytester, monkeypatch)
    before = snapshot_tree(fixtures)
    plain = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--collect-only")
    assert plain.ret == 0, plain.stdout.str()
    assert "unused golden" not in plain.stdout.str()
    update = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--collect-only", "--snapshot-update")
    assert update.ret == 0, update.stdout.str()
    update.stdout.fnmatch_lines([f"{KEPT} --collect-only runs no variant"])
    assert snapshot_tree(fixtures) == before


@pytest.mark.parametrize(
    ("selection", "reason"),
    [
        (["-k", "openai-run"], "the run was filtered (-k 'openai-run')"),
        (["--rule=stream.*"], "the run was filtered (--rule='stream.*')"),
        (["-m", "not rule"], "the run was filtered (-m 'not rule')"),
    ],
    ids=["keyword", "rule", "marker"],
)
def test_a_filtered_update_keeps_every_golden(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, selection: list[str], reason: str
) -> None:
    fixtures, orphan_file, orphan_folder = _suite_with_orphans(pytester, monkeypatch)
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--snapshot-update", *selection)
    result.stdout.fnmatch_lines([f"{KEPT} {reason}"])
    assert orphan_file.exists() and orphan_folder.exists()
    assert len(list((fixtures / "golden" / SCENARIO_ID).glob("*.json"))) == 7


def test_an_update_of_some_scenario_files_keeps_every_golden(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    fixtures, orphan_file, orphan_folder = _suite_with_orphans(pytester, monkeypatch)
    add_scenario(fixtures, "loop-tool-loop")
    before = snapshot_tree(fixtures / "golden" / "loop-tool-loop")
    result = run(pytester, str(fixtures / "scenarios" / f"{SCENARIO_ID}.json"), "--port=reference", "--snapshot-update")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"{KEPT} 1 scenario file(s) were not collected (loop-tool-loop)"])
    assert orphan_file.exists() and orphan_folder.exists()
    assert snapshot_tree(fixtures / "golden" / "loop-tool-loop") == before


class _CtrlCOnSecondVariant:
    """Presses Ctrl-C while the second variant runs."""

    def __init__(self) -> None:
        self.calls = 0

    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self.calls += 1
        if self.calls == 2:
            raise KeyboardInterrupt


class _FailSecondVariant:
    """The second variant fails (as a port's failure would)."""

    def __init__(self) -> None:
        self.calls = 0

    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self.calls += 1
        if self.calls == 2:
            raise AssertionError("deliberately failing variant")


def test_an_interrupted_update_keeps_every_golden(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    fixtures, orphan_file, orphan_folder = _suite_with_orphans(pytester, monkeypatch)
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--snapshot-update", plugins=[_CtrlCOnSecondVariant()])
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"{KEPT} the run was interrupted or stopped early (Ctrl-C, -x, --maxfail)"])
    assert orphan_file.exists() and orphan_folder.exists()


def test_an_update_stopped_by_x_keeps_every_golden(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    fixtures, orphan_file, orphan_folder = _suite_with_orphans(pytester, monkeypatch)
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--snapshot-update", "-x", plugins=[_FailSecondVariant()])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"{KEPT} the run was interrupted or stopped early (Ctrl-C, -x, --maxfail)"])
    assert orphan_file.exists() and orphan_folder.exists()


def test_an_update_with_a_scenario_that_fails_to_load_keeps_every_golden(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures, orphan_file, orphan_folder = _suite_with_orphans(pytester, monkeypatch)
    add_scenario(fixtures, "loop-tool-loop")
    (fixtures / "scenarios" / "loop-tool-loop.json").write_text("{ not json", encoding="utf-8")
    before = snapshot_tree(fixtures / "golden")
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--snapshot-update", "--continue-on-collection-errors")
    result.stdout.fnmatch_lines([f"{KEPT} 1 file(s) failed to collect"])
    assert orphan_file.exists() and orphan_folder.exists()
    # The goldens of the scenario that did not load are not orphans.
    assert {k: v for k, v in snapshot_tree(fixtures / "golden").items() if k.startswith("loop-tool-loop")} == {
        k: v for k, v in before.items() if k.startswith("loop-tool-loop")
    }


def test_a_complete_update_deletes_only_the_orphans_and_rewrites_goldens_byte_identical(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures, orphan_file, orphan_folder = _suite_with_orphans(pytester, monkeypatch)
    before = snapshot_tree(fixtures / "golden" / SCENARIO_ID)
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--snapshot-update")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"deleted orphan golden (no variant owns it): {orphan_file}", f"deleted orphan golden (no variant owns it): {orphan_folder}"]
    )
    assert not orphan_file.exists() and not orphan_folder.exists()
    after = snapshot_tree(fixtures / "golden" / SCENARIO_ID)
    del before[orphan_file.name]
    assert after == before  # every golden rewritten through syrupy's extension, byte for byte


def test_a_run_without_update_names_orphans_but_deletes_none(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    fixtures, orphan_file, orphan_folder = _suite_with_orphans(pytester, monkeypatch)
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"ERROR unused golden*{orphan_file}", f"ERROR unused golden*{orphan_folder}"])
    assert orphan_file.exists() and orphan_folder.exists()


CRASHING_WORKER = """
import os

# One crash proves the point; a crash in every worker xdist starts in its place only started
# more interpreters (one per worker started in its place).
CRASHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crashed-once")


def pytest_runtest_call(item):
    # An xdist worker dies while running the second variant it was given: the first worker
    # to get there, once per run (the file is created by exactly one process).
    config = item.config
    if hasattr(config, "workerinput"):
        config._crash_count = getattr(config, "_crash_count", 0) + 1
        if config._crash_count == 2:
            try:
                os.close(os.open(CRASHED, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os._exit(3)
"""


@pytest.mark.timeout(300)  # an xdist run in a subprocess: seconds idle, many more under load
@pytest.mark.slow
def test_an_update_whose_xdist_worker_crashed_keeps_every_golden(tmp_path: Path) -> None:
    fixtures = private_fixtures(tmp_path, SCENARIO_ID)
    orphan = fixtures / "golden" / SCENARIO_ID / "openai-orphan.json"
    shutil.copy(fixtures / "golden" / SCENARIO_ID / "openai-run.json", orphan)
    (tmp_path / "crashing_worker.py").write_text(CRASHING_WORKER, encoding="utf-8")
    # One worker: it crashes, xdist starts one in its place that runs the rest, and the
    # controller folds in what the workers that ended exported, as with any number of them
    # (a second worker from the start only adds an interpreter).
    run = run_pytest(
        str(fixtures / "scenarios"), "--port=reference", "--snapshot-update", "-n", "1", "-p", "crashing_worker",
        fixtures=fixtures, env_extra={"PYTHONPATH": str(tmp_path)}, timeout=280,
    )
    assert "crashed while running" in run.output, run.output
    assert re.search(rf"{re.escape(KEPT)} \d+ xdist worker\(s\) crashed", run.output), run.output
    assert orphan.exists()
