"""The benchmark scripts still run (they print figures; nothing here asserts a speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_scenario_throughput_runs_both_paths() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/scenario_throughput.py", "--rounds", "1", "--only", "susp-waitfor-raises"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "reference shim (subprocess)" in done.stdout and "in-process / shim ratio" in done.stdout


def test_fake_provider_latency_runs() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/fake_provider_latency.py", "--requests", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "nodelay=on" in done.stdout and "nodelay=off" in done.stdout


def test_suite_floor_runs_every_step() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/suite_floor.py", "--only", "susp-waitfor-raises", "--calls", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for line in ("shim round trip", "loopback HTTP request", "variants x round trip", "in-process / shim ratio"):
        assert line in done.stdout, done.stdout
    assert "12 variants" in done.stdout  # the --only scenario's variants, all passed


def test_own_suite_prints_wall_cpu_load_and_where_the_time_goes() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/own_suite.py", "--top", "3", "tests/test_flake_rate.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "summary: 7 passed" in done.stdout, done.stdout
    for line in ("wall ", "CPU ", "load (1 min) before", "test time summed per folder", "tests/test_flake_rate", "slowest 3 tests:"):
        assert line in done.stdout, done.stdout


def test_all_figures_runs_every_step_and_sums_them_up() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/all_figures.py", "--quick"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.split("=== summary", 1)[-1]
    lines = {line.split(" wall ")[0].strip(): line for line in summary.splitlines() if " wall " in line}
    for step in ("reference suite against its floor", "differential throughput", "own test command"):
        assert lines[step].endswith("ok"), done.stdout[-3000:]


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
