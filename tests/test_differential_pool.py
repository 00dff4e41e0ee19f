"""The parallel differential search (toolnexus_conformance/differential/pool.py): the example budget is
split without empty shares, the reported difference is the lowest-numbered worker's whatever
the order workers finish in, a worker stops once a lower one found a difference, and a
worker that cannot search (a shim that does not start, a worker process that dies) ends the
run with one readable line, never a traceback.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import proc_tree
import pytest
from quick_figures import QUICK_RUN_TIMEOUT_S, QuickRun

from toolnexus_conformance.differential import pool
from toolnexus_conformance.differential.cli import main
from toolnexus_conformance.differential.pool import LowestFinder, WorkerJob, WorkerOutcome, run_worker, search, shares
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.shim.ports import ResolvedPort, resolve

ROOT = Path(__file__).resolve().parents[1]
MUTANT_SHIM = ROOT / "tests" / "mutants" / "mutant_shim.py"
MUTANT_CMD = f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} assistant-args-recompacted"


def _port(cmd: str) -> ResolvedPort:
    return resolve(None, cmd, None, None)


@pytest.mark.parametrize(("examples", "workers", "expected"), [
    (200, 2, [100, 100]), (5, 2, [3, 2]), (7, 3, [3, 2, 2]), (1, 4, [1]), (3, 1, [3]),
])
def test_examples_are_split_without_empty_shares(examples: int, workers: int, expected: list[int]) -> None:
    assert shares(examples, workers) == expected


def test_the_lowest_worker_with_a_difference_wins_whatever_order_they_finish_in(monkeypatch: pytest.MonkeyPatch) -> None:
    finished = [
        WorkerOutcome(2, 9, found={"id": "from-2"}, failures=("c",)),
        WorkerOutcome(1, 4, found={"id": "from-1"}, failures=("b",)),
        WorkerOutcome(0, 50),
    ]
    monkeypatch.setattr(pool, "_in_processes", lambda jobs: finished)
    result = search(_port("true"), _port("true"), examples=60, workers=3)
    assert result.found == {"id": "from-1"} and result.failures == ("b",)
    assert result.tried == 63 and result.workers == 3


def test_a_worker_error_ends_the_search_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    finished = [WorkerOutcome(0, 3), WorkerOutcome(1, 0, error="could not start the shim: no such file")]
    monkeypatch.setattr(pool, "_in_processes", lambda jobs: finished)
    with pytest.raises(HarnessError, match=r"^worker 1: could not start the shim: no such file$"):
        search(_port("true"), _port("true"), examples=6, workers=2)


def test_the_finder_keeps_the_lowest_worker() -> None:
    finder = LowestFinder()
    finder.lower_to(3)
    finder.lower_to(5)
    assert finder.get() == 3
    finder.lower_to(1)
    assert finder.get() == 1


def test_a_worker_stops_before_its_next_example_once_a_lower_worker_found_one() -> None:
    finder = LowestFinder()
    finder.lower_to(0)
    reference = resolve("reference", None, None, None)
    outcome = run_worker(WorkerJob(reference, reference, worker=1, examples=50), finder)
    assert outcome.stopped and outcome.tried == 0 and outcome.found is None and outcome.error is None


def test_two_workers_report_what_worker_0_alone_finds() -> None:
    """Worker 0 searches the derandomized stream: its minimal scenario is the run's answer,
    even when worker 1 also finds one (every generated scenario shows this mutant)."""
    reference, mutant = resolve("reference", None, None, None), _port(MUTANT_CMD)
    alone = run_worker(WorkerJob(reference, mutant, worker=0, examples=6), LowestFinder())
    both = search(reference, mutant, examples=12, workers=2)
    assert alone.found is not None and both.found == alone.found
    assert any("tool_calls[0].function.arguments" in line for line in both.failures), both.failures


def test_a_shim_that_does_not_start_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-shim"
    status = main([f"--port-cmd={missing}", "--examples", "4", "--workers", "2", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith("differential: worker ") and "could not start the shim" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.glob("*.json"))


def test_a_worker_process_that_dies_is_reported_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The "shim" kills the worker process that started it.
    killer = "sh -c 'kill -9 $PPID; sleep 5'"
    status = main([f"--port-cmd={killer}", "--examples", "4", "--workers", "2", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "the worker process died" in err and "Traceback" not in err, err


def test_workers_must_be_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--port=reference", "--workers", "0"])
    assert exited.value.code == 2
    assert "--examples, --workers and --pairs must be at least 1" in capsys.readouterr().err


@pytest.mark.timeout(QUICK_RUN_TIMEOUT_S)  # the shared quick run may be made in this setup
def test_the_throughput_benchmark_prints_both_figures(all_figures_quick: QuickRun) -> None:
    # all_figures.py --quick's step is this smoke run to the letter:
    # differential_throughput.py --examples 4 --workers 2.
    step = all_figures_quick.step("differential throughput")
    assert step.ok, step.output[-2000:]
    lines = [line for line in step.output.splitlines() if "scenarios/s" in line]
    assert [line.split(":")[0] for line in lines] == ["1 worker ", "2 workers"], step.output
    assert all("4 scenarios in" in line and "ms/scenario" in line for line in lines), step.output


def _wait_until_searching(run: subprocess.Popen[str], workers: int) -> None:
    """Past start-up: every worker has its shims (two pairs each, forked or cold) and has had
    a moment to run scenarios on them."""
    wanted = 4 * workers
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shims = [p for p in proc_tree.descendants(run.pid)
                 if any(arg.endswith("shims/reference/shim.py") for arg in proc_tree.cmdline(p))]
        if len(shims) >= wanted:
            time.sleep(0.5)
            return
        assert run.poll() is None, f"the search ended before it was interrupted: {run.communicate()}"
        time.sleep(0.05)
    raise AssertionError(f"the search did not start its {wanted} shims within 60 s")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_every_worker_and_never_claims_agreement(workers: str) -> None:
    command = [sys.executable, "-m", "toolnexus_conformance.differential", "--port=reference-norelay", "--against=reference",
               "--examples", "5000", "--workers", workers]
    # Its own process group, as a terminal's Ctrl-C reaches the parent and its workers alike.
    run = subprocess.Popen(command, cwd=ROOT, start_new_session=True, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_until_searching(run, int(workers))
    os.killpg(run.pid, signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, (out, err)
    assert "agree" not in out and err.strip() == "differential: interrupted; nothing written", (out, err)
