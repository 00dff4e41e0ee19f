"""Fixtures shared by the harness's in-process tests that drive real shims: one loopback
fake provider and started shim sessions, each kept for a test module; the order the suite
runs in (longest first, so xdist workers overlap them; the tests reading the mutants'
background pass last); and the gates (tests/gates), which
only a command naming that folder collects."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import gate_selection
import harness_wheel
import pytest

from harness.fake_provider import FakeProvider
from harness.ports import resolve
from harness.shim_session import ShimSession

# The fault-injection suite (tests/faults) runs the plugin in-process through pytester;
# pytest_plugins is only honoured in a top-level conftest.
pytest_plugins = ["pytester"]


# Tests that each take minutes (a real port's whole suite, the CI gate's end-to-end runs,
# the mutants over their full sets, whose first test starts the pool that runs them all),
# and in the test command its longest tests (10-40 s each on a loaded machine), go first:
# xdist hands the first tests out round-robin, so the two workers start on them together and
# fill the rest of the run with the short tests instead of ending on one long test while the
# other worker idles.
LONGEST_FIRST = (
    "tests/gates/test_real_ports.py::test_port_meets_its_expectations",
    "tests/gates/test_mutant_full_sets.py",
    "tests/gates/test_ci_gate_end_to_end.py",
    "tests/plugin/test_rerun_from_port_repository.py",
    "tests/test_benchmarks.py::test_all_figures_runs_every_step_and_sums_them_up",
    "tests/plugin/test_broken_shims.py::test_the_null_shim_fails_every_scenario",
    "tests/plugin/test_snapshot_update_safety.py::test_an_update_whose_xdist_worker_crashed_keeps_every_golden",
    "tests/cross_resume/test_cross_resume_runs.py::test_reference_to_reference_passes_every_durable_halt",
)  # longest first: the order listed, which alternates them between two workers
# Tests that only read what another process of the run makes go last, so no worker waits
# for it while it still has other tests to run: the scoped mutants' tests read a pass that
# starts when collection ends (tests/mutants/conftest.py) and goes on beside the other tests;
# the floor and own-suite benchmark tests read the all_figures.py run the first benchmark
# test makes. Within each group the collection order is kept.
READ_A_BACKGROUND_PASS_LAST = (
    "tests/mutants/test_mutants.py::test_mutant_is_killed",
    "tests/mutants/test_mutants.py::test_every_normative_rule_is_killed_in_two_scenarios",
    "tests/test_benchmarks.py::test_suite_floor_runs_every_step",
    "tests/test_benchmarks.py::test_own_suite_prints_wall_cpu_load_and_where_the_time_goes",
)


def run_order(nodeid: str) -> tuple[int, int]:
    """(group, place): the longest first in the order listed, then the rest, then the readers."""
    for place, prefix in enumerate(LONGEST_FIRST):
        if nodeid.startswith(prefix):
            return 0, place
    return (2 if nodeid.startswith(READ_A_BACKGROUND_PASS_LAST) else 1), 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: run_order(item.nodeid))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return True if gate_selection.ignored(collection_path, config) else None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    # Said where the result is read, so a green run is never taken for one that ran the gates.
    if gate_selection.left_out(config):
        terminalreporter.write_sep("=", gate_selection.LEFT_OUT, yellow=True, bold=True)


@pytest.fixture(scope="session", autouse=True)
def _inner_runs_ignore_the_ci_host() -> Iterator[None]:
    """Inner pytest runs (pytester, subprocess gates) must print the same on CI as here.

    pytest writes every short-summary message in full when it sees $CI or $BUILD_NUMBER,
    so the tests that read an inner run's summary would see other lines on a CI host.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("CI", raising=False)
        patch.delenv("BUILD_NUMBER", raising=False)
        yield


@pytest.fixture(scope="session", autouse=True)
def _inner_runs_cache_bytecode() -> Iterator[None]:
    """The Python processes the tests start (inner pytest runs, CLIs, shims) keep compiled
    bytecode in __pycache__ beside the sources (ignored by git), as Python does by default.

    A machine that sets PYTHONDONTWRITEBYTECODE (this one, CI runners) makes every such
    process compile the harness, reference_py and pytest's rewritten asserts from source
    again: ~0.8 s of CPU per inner pytest start, over a hundred starts in a run. What the
    processes do is unchanged; only where their bytecode comes from.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        yield


@pytest.fixture(scope="session")
def harness_wheel_build(tmp_path_factory: pytest.TempPathFactory) -> harness_wheel.WheelBuild:
    """This repository's wheel, built once per test run for all xdist workers."""
    return harness_wheel.harness_wheel(tmp_path_factory)


@pytest.fixture(scope="module")
def shared_provider() -> Iterator[FakeProvider]:
    with FakeProvider() as running:
        yield running


@pytest.fixture(scope="module")
def start_shim() -> Iterator[Callable[[list[str]], ShimSession]]:
    """Start a shim (argv) with its handshake done; every one started is closed after the module."""
    with ExitStack() as stack:

        def start(argv: list[str]) -> ShimSession:
            session = stack.enter_context(ShimSession(argv))
            session.ensure_alive()
            return session

        yield start


@pytest.fixture(scope="module")
def reference_shim(start_shim: Callable[[list[str]], ShimSession]) -> ShimSession:
    return start_shim(resolve("reference", None, None, None).argv)


@pytest.fixture(scope="module")
def norelay_shim(start_shim: Callable[[list[str]], ShimSession]) -> ShimSession:
    argv = resolve("reference-norelay", None, None, None).argv
    assert argv[-1] == "--no-relay", "the registry's reference-norelay must switch relay off"
    return start_shim(argv)
