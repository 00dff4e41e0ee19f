"""Fixtures shared by the harness's in-process tests that drive real shims: one loopback
fake provider and started shim sessions, each kept for a test module; the order the suite
runs in and how xdist workers share it (tests/run_order.py); and the gates (tests/gates),
which only a command naming that folder collects."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import gate_selection
import harness_wheel
import pytest
import quick_figures
import worker_count
from build_once import run_folder
from run_order import MARKERS, ordered

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import resolve
from toolnexus_conformance.shim.session import ShimSession

# This process and xdist's workers keep compiled bytecode as the processes the tests start do
# (``_inner_runs_cache_bytecode`` below): with PYTHONDONTWRITEBYTECODE set, each of them
# rewrote the asserts of every test module from source at every start, about half the CPU
# of collecting the suite. Set here, before any test module is imported;
# what the tests run is unchanged, only where their bytecode comes from.
sys.dont_write_bytecode = False

# The harness's build cache defaults to ~/.cache/toolnexus-conformance (outside a port's
# working tree); our own tests keep theirs in this checkout's ignored .cache/conformance, where
# the tests that look into it (wheel, java AOT, shim honesty) expect it, and the processes
# they start inherit it.
os.environ.setdefault("TOOLNEXUS_CONFORMANCE_CACHE", str(Path(__file__).resolve().parents[1] / ".cache" / "conformance"))

# The fault-injection suite (tests/faults) runs the plugin in-process through pytester;
# pytest_plugins is only honoured in a top-level conftest.
pytest_plugins = ["pytester"]

# `-n auto` for our own suite: one worker more than the cores (tests/worker_count.py).
pytest_xdist_auto_num_workers = worker_count.pytest_xdist_auto_num_workers


def pytest_configure(config: pytest.Config) -> None:
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    # `-n` alone means `--dist worksteal` in our suite (xdist's ``load`` never takes queued
    # tests back, so one worker could run on alone); an explicit --dist is kept.
    explicit = any(arg == "--dist" or arg.startswith("--dist=") for arg in config.invocation_params.args)
    if config.getoption("dist", "no") == "load" and not explicit:
        config.option.dist = "worksteal"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = ordered(items)


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
    again at every inner pytest start, and a run makes over a hundred of them. What the
    processes do is unchanged; only where their bytecode comes from.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        yield


@pytest.fixture(scope="session")
def harness_wheel_build(tmp_path_factory: pytest.TempPathFactory) -> harness_wheel.WheelBuild:
    """This repository's wheel, built once per test run for all xdist workers."""
    return harness_wheel.harness_wheel(tmp_path_factory)


@pytest.fixture(scope="session")
def shared_generated_streams(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The differential's generated streams, shared by the run's xdist workers through files
    (tests/generated_streams.py): a stream one worker drew, another reads."""
    import generated_streams  # imports the differential's strategies: only where a test draws

    generated_streams.share_in(run_folder(tmp_path_factory) / "shared" / "generated-streams")


@pytest.fixture
def all_figures_quick(tmp_path_factory: pytest.TempPathFactory) -> quick_figures.QuickRun:
    """The test run's one ``benchmarks/all_figures.py --quick`` run (tests/quick_figures.py),
    for the tests that read one of its smoke steps instead of starting that script again."""
    return quick_figures.quick_run(tmp_path_factory)


@pytest.fixture(scope="module")
def shared_provider() -> Iterator[FakeProvider]:
    with FakeProvider() as running:
        yield running


@pytest.fixture(scope="module")
def start_shim() -> Iterator[Callable[[list[str]], ShimSession]]:
    """Start a shim (argv, a plain subprocess) with its handshake done; every one started is
    closed after the module."""
    with ExitStack() as stack:

        def start(argv: list[str]) -> ShimSession:
            session = stack.enter_context(ShimSession(argv))
            session.ensure_alive()
            return session

        yield start


@pytest.fixture(scope="module")
def start_port() -> Iterator[Callable[[str], ShimSession]]:
    """Start a registered port's shim as the plugin does (the registry's launch), handshake
    done; every one started is closed after the module."""
    with ExitStack() as stack:

        def start(name: str) -> ShimSession:
            session = stack.enter_context(port_session(resolve(name, None, None, None)))
            session.ensure_alive()
            return session

        yield start


@pytest.fixture(scope="module")
def reference_shim(start_port: Callable[[str], ShimSession]) -> ShimSession:
    return start_port("reference")


@pytest.fixture(scope="module")
def norelay_shim(start_port: Callable[[str], ShimSession]) -> ShimSession:
    assert resolve("reference-norelay", None, None, None).argv[-1] == "--no-relay", \
        "the registry's reference-norelay must switch relay off"
    return start_port("reference-norelay")
