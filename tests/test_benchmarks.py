"""The benchmark scripts still run (they print figures; nothing here asserts a speed).

``all_figures.py --quick`` runs the floor, differential and own-suite scripts as its steps;
their tests read those steps from that one run (tests/quick_figures.py, the
``all_figures_quick`` fixture) instead of starting the scripts again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from quick_figures import QUICK_RUN_TIMEOUT_S, QuickRun, Step

ROOT = Path(__file__).resolve().parents[1]
# The shared quick run is made in the setup of whichever of its readers comes first: under
# load it can take longer than the suite-wide pytest-timeout, hence a limit of its own.
QUICK_RUN_LIMIT = pytest.mark.timeout(QUICK_RUN_TIMEOUT_S)


def test_scenario_throughput_runs_both_paths() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/scenario_throughput.py", "--rounds", "1", "--only", "susp-waitfor-raises"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "reference shim (subprocess)" in done.stdout and "in-process / shim ratio" in done.stdout


def test_variant_cost_splits_run_and_judge() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/variant_cost.py", "--rounds", "1", "--only", "relay-single-durable"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "  run " in done.stdout and "  judge " in done.stdout and "rule failures in the last round: 0" in done.stdout


def test_fake_provider_latency_runs() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/fake_provider_latency.py", "--requests", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "nodelay=on" in done.stdout and "nodelay=off" in done.stdout


def test_differential_cost_splits_a_worker_by_thread_and_replays_the_judge() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/differential_cost.py", "--examples", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "5 scenarios: worker" in done.stdout and "  main " in done.stdout
    assert "judge and comparison, replayed on 5 scenarios' records" in done.stdout


@QUICK_RUN_LIMIT
@pytest.mark.late
def test_suite_floor_runs_every_step(all_figures_quick: QuickRun) -> None:
    floor = all_figures_quick.step("reference suite against its floor")
    assert floor.ok, floor.output[-2000:]
    for line in ("shim round trip", "loopback HTTP request", "variants x round trip", "in-process / shim ratio"):
        assert line in floor.output, floor.output
    assert "12 variants" in floor.output  # the --only scenario's variants, all passed


@QUICK_RUN_LIMIT
@pytest.mark.late
def test_own_suite_prints_wall_cpu_load_and_where_the_time_goes(all_figures_quick: QuickRun) -> None:
    own = all_figures_quick.step("own test command")
    assert own.ok, own.output[-3000:]
    assert "summary: 7 passed" in own.output, own.output
    for line in ("wall ", "CPU ", "load (1 min) before", "test time summed per folder", "tests/test_flake_rate", "slowest 3 tests:"):
        assert line in own.output, own.output


@QUICK_RUN_LIMIT
@pytest.mark.slow
def test_all_figures_runs_every_step_and_sums_them_up(all_figures_quick: QuickRun) -> None:
    assert all_figures_quick.code == 0, all_figures_quick.output[-3000:]
    for step in ("reference suite against its floor", "differential throughput", "own test command"):
        assert all_figures_quick.step(step).ok, all_figures_quick.output[-3000:]
    summary = all_figures_quick.output.split("=== summary", 1)[-1]
    assert summary.count(" ms  load ") == 3 and " probe " in summary, summary


def test_machine_speed_prints_the_probe() -> None:
    done = subprocess.run([sys.executable, "benchmarks/machine_speed.py", "--rounds", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("speed probe: median ") and "ms of CPU" in done.stdout, done.stdout


def test_http_client_cost_measures_both_clients() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/http_client_cost.py", "--requests", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "reference_py (httpx)" in done.stdout and "bare asyncio HTTP/1.1" in done.stdout, done.stdout


def test_own_suite_lists_each_skipped_test_with_its_reason() -> None:
    import importlib.util
    import xml.etree.ElementTree as ET

    spec = importlib.util.spec_from_file_location("own_suite", ROOT / "benchmarks" / "own_suite.py")
    assert spec is not None and spec.loader is not None
    own_suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(own_suite)
    suite = ET.fromstring(
        '<testsuite><testcase classname="tests.a" name="test_ran"/>'
        '<testcase classname="tests.b" name="test_left"><skipped message="go is not\ninstalled"/></testcase></testsuite>'
    )
    assert own_suite.skip_lines(list(suite.iter("testcase"))) == ["SKIPPED tests.b::test_left: go is not installed"]


def test_a_quick_run_step_that_failed_or_never_ran_is_told_apart() -> None:
    output = (
        "\n=== reference suite against its floor: python suite_floor.py\nshim round trip 0.2 ms\n"
        "\n=== own test command: python own_suite.py\nsummary: 1 failed\n"
        "\n=== summary (wall and CPU of each step's whole process tree, load when it started)\n"
        "reference suite against its floor   wall     1.0 s  CPU     1.0 s  load 0.1 0.1 0.1  ok\n"
        "own test command                    wall     2.0 s  CPU     2.0 s  load 0.1 0.1 0.1  exit 1\n"
    )
    run = QuickRun(1, output)
    assert run.step("reference suite against its floor") == Step("reference suite against its floor: python suite_floor.py\nshim round trip 0.2 ms\n", True)
    assert not run.step("own test command").ok
    with pytest.raises(AssertionError, match="ran no step 'differential throughput'"):
        run.step("differential throughput")


def test_generator_mix_compares_both_backends() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/generator_mix.py", "--examples", "20"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if " distinct, " in line]
    assert [line.split()[0] for line in lines] == ["hypothesis", "toolnexus-generate-only"], done.stdout
    assert all("ms CPU each" in line and "restart " in line and "tool calls " in line for line in lines), done.stdout
