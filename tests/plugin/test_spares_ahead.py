"""Shim processes as a session's user sees them: a variant that resumes in a fresh shim
resumes in a process no other phase used, and a session whose pytest run holds other tests
starts no shim beside them before a variant asks for one. How a process is started
(spawned, or forked from a warm one) and how many are kept ready are the shim launcher's
business, not this test's.

Each session runs in this process (pytester): the shim processes it starts are recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inprocess import INNER
from plugin_runner import REPO

import toolnexus_conformance.shim.forked as forked
import toolnexus_conformance.shim.launch as launch
from toolnexus_conformance.scenario.model import load_scenario


class SpawnProbe:
    """Records the shim processes the inner session starts (every ``ShimChild``, spawned or
    forked) and how many had started when collection ended; a plugin object of the
    in-process run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.spawned: list[int] = []
        self.before_first_test: int | None = None
        spawned = self.spawned

        class CountingChild(launch.ShimChild):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                spawned.append(self.pid)

        class CountingFork(forked.ForkedChild):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                spawned.append(self.pid)

        for module in (launch, forked):  # a plain start, and a forked launcher's cold one
            monkeypatch.setattr(module, "ShimChild", CountingChild)
        monkeypatch.setattr(forked, "ForkedChild", CountingFork)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.before_first_test = len(self.spawned)


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


def restarts_asked(path: Path) -> int:
    """How many variants of the scenario resume in a fresh shim process."""
    scenario = load_scenario(path)
    restarts = bool((scenario.data.get("resume") or {}).get("restartShim"))
    return sum(1 for variant in scenario.variants() if restarts and variant.resume_entry is not None)


def test_a_port_with_resume_gets_a_fresh_process_for_each_restart(probe_run: ProbeRun) -> None:
    probe = shared_run(probe_run, str(ACROSS_PROCESS), "--port=reference")
    assert restarts_asked(ACROSS_PROCESS) > 0
    assert len(set(probe.spawned)) == len(probe.spawned), "a process was used twice"
    assert len(probe.spawned) >= 1 + restarts_asked(ACROSS_PROCESS), "a restart resumed in a process already used"


def test_a_session_with_other_tests_starts_no_shim_before_a_variant_asks(probe_run: ProbeRun, tmp_path: Path) -> None:
    # Its other tests may run first, and a shim idling beside them is not theirs to see.
    other = tmp_path / "test_other.py"
    other.write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    args = (str(other), str(ACROSS_PROCESS), "--port=reference", "--rootdir", str(tmp_path.parent))
    assert probe_run(*args).before_first_test == 0
