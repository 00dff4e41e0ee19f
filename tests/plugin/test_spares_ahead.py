"""Processes a session spawns ahead: the first shim while pytest collects (in a session of
scenario variants alone), and processes for the variants that resume in a fresh shim (the
reference's forked from one zygote, others' spares booted ahead) — but only for those the
port's handshake covers (a port without ``resume`` runs none of them, so nothing is booted
for them).

Each session runs in this process (pytester): the shims it starts are the processes counted.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inprocess import INNER
from plugin_runner import REPO

import harness.fork_server as fork_server
import harness.shim_session as shim_session
import harness.warm_shims as warm_shims


class SpawnProbe:
    """Counts the shim processes the inner session starts (every ``ShimChild`` it spawns or
    has its zygote fork), the zygotes it launches, and how many of either had started when
    collection ended; a plugin object of the in-process run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.spawned: list[int] = []
        self.forked: list[int] = []
        self.zygotes: list[int] = []
        self.before_first_test: int | None = None
        spawned, forked, zygotes = self.spawned, self.forked, self.zygotes

        class CountingChild(shim_session.ShimChild):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                spawned.append(self.pid)

        class CountingFork(warm_shims.ForkedChild):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                spawned.append(self.pid)
                forked.append(self.pid)

        launch = fork_server.launch

        def counting_launch(*args: Any, **kwargs: Any) -> Any:
            server = launch(*args, **kwargs)
            if server is not None:
                zygotes.append(server.pid)
            return server

        monkeypatch.setattr(shim_session, "ShimChild", CountingChild)
        monkeypatch.setattr(warm_shims, "ForkedChild", CountingFork)
        monkeypatch.setattr(fork_server, "launch", counting_launch)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.before_first_test = len(self.spawned) + len(self.zygotes)


ACROSS_PROCESS = REPO / "fixtures" / "scenarios" / "resume-across-process.json"
ProbeRun = Callable[..., SpawnProbe]


@pytest.fixture
def probe_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> ProbeRun:
    """``probe_run(*args, exit_code=0) -> SpawnProbe``: the plugin in this process from the
    repository root (the shims it starts are the subprocesses counted)."""
    monkeypatch.chdir(REPO)

    def run(*args: str, exit_code: int = 0) -> SpawnProbe:
        probe = SpawnProbe(monkeypatch)
        result = pytester.runpytest_inprocess(*INNER, *args, plugins=[probe])
        output = result.stdout.str() + result.stderr.str()
        assert int(result.ret) == exit_code, output
        return probe

    return run


# Probes of runs that two tests read: the same session, run once per test process.
_SHARED: dict[tuple[str, ...], SpawnProbe] = {}


def shared_run(probe_run: ProbeRun, *args: str) -> SpawnProbe:
    """``probe_run(*args)``, run by the first test that asks; the others read its probe."""
    if args not in _SHARED:
        _SHARED[args] = probe_run(*args)
    return _SHARED[args]


def test_a_port_with_resume_gets_its_first_shim_and_spares_ahead(probe_run: ProbeRun) -> None:
    # 6 variants, each restarting once: the first process plus one per restart, no more;
    # the reference's restarts all forked from one zygote.
    probe = shared_run(probe_run, str(ACROSS_PROCESS), "--port=reference")
    assert len(probe.spawned) == 7
    assert (len(probe.forked), len(probe.zygotes)) == (6, 1)


def test_a_port_without_resume_boots_no_spare_for_variants_it_cannot_run(probe_run: ProbeRun) -> None:
    shim = REPO / "tests" / "cross_resume" / "no_resume_shim.py"
    # Its variants fail for the missing capability (no expectations here), after one process,
    # started cold while pytest collected.
    probe = probe_run(str(ACROSS_PROCESS), f"--port-cmd={sys.executable} {shim}", exit_code=1)
    assert (len(probe.spawned), probe.forked, probe.zygotes, probe.before_first_test) == (1, [], [], 1)


def test_a_session_of_scenarios_starts_its_shim_while_collecting(probe_run: ProbeRun) -> None:
    probe = shared_run(probe_run, str(ACROSS_PROCESS), "--port=reference")
    assert probe.before_first_test == 1 and probe.spawned[0] not in probe.forked, "the first shim starts cold"


def test_a_session_with_other_tests_starts_no_shim_before_a_variant_asks(probe_run: ProbeRun, tmp_path: Path) -> None:
    # Its other tests may run first, and a shim idling beside them is not theirs to see.
    other = tmp_path / "test_other.py"
    other.write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    args = (str(other), str(ACROSS_PROCESS), "--port=reference", "--rootdir", str(tmp_path.parent))
    assert probe_run(*args).before_first_test == 0
