"""The plugin runs the next variant while it judges the current one (``harness.run_ahead``):
every untimed variant's run is started before the variant before it is judged, a timed
variant (a tool delay or a held waitFor) is never started before its turn, runs never
overlap one another and keep the items' order, and a run that breaks ahead of its turn is
reported under its own variant only."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from inprocess import PluginRunner

import harness.items
import harness.run_ahead
import harness.variant_run
from harness.process_tree import descendants
from harness.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]
UNTIMED = REPO / "fixtures" / "scenarios" / "loop-plain-answer.json"
TIMED = REPO / "fixtures" / "scenarios" / "decl-order.json"
FAULT_SHIM = REPO / "tests" / "faults" / "fault_shim.py"


class Probe:
    """Logs, in order: a run started (``start``), begun and ended on the worker
    (``run``/``ran``), and a variant judged (``judge``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[tuple[str, str]] = []
        self.run_threads: set[str] = set()
        self._running = 0
        self.overlapped = False
        original_start = harness.run_ahead.RunAhead.start
        original_execute = harness.variant_run.execute
        original_evaluate = harness.items.evaluate

        def start(ahead: Any, item: Any) -> None:
            if item not in ahead._started:
                self.log.append(("start", item.variant.node_id))
            original_start(ahead, item)

        def execute(variant: Any, *args: Any) -> Any:
            self._running += 1
            self.overlapped |= self._running > 1
            self.run_threads.add(threading.current_thread().name)
            self.log.append(("run", variant.node_id))
            try:
                return original_execute(variant, *args)
            finally:
                self.log.append(("ran", variant.node_id))
                self._running -= 1

        def evaluate(record: Any, *args: Any) -> Any:
            self.log.append(("judge", record.variant.node_id))
            return original_evaluate(record, *args)

        monkeypatch.setattr(harness.run_ahead.RunAhead, "start", start)
        monkeypatch.setattr(harness.variant_run, "execute", execute)
        monkeypatch.setattr("harness.session.execute", execute)
        monkeypatch.setattr(harness.items, "evaluate", evaluate)

    def at(self, what: str, node: str) -> int:
        return self.log.index((what, node))

    def order(self, what: str) -> list[str]:
        return [node for kind, node in self.log if kind == what]


def _node_ids(path: Path) -> list[str]:
    return [v.node_id for v in load_scenario(path).variants()]


def test_untimed_runs_start_before_the_variant_before_them_is_judged(
    run_plugin: PluginRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = Probe(monkeypatch)
    run = run_plugin(str(UNTIMED), str(TIMED), "--port=reference", "-p", "no:randomly")
    assert run.code == 0, run.output
    nodes = _node_ids(UNTIMED) + _node_ids(TIMED)
    assert probe.order("run") == nodes, "runs left the items' order"
    assert probe.order("judge") == nodes
    assert not probe.overlapped, "two runs used the shim at once"
    assert threading.main_thread().name not in probe.run_threads and len(probe.run_threads) == 1
    for before, node in zip(nodes, nodes[1:], strict=False):
        if node in _node_ids(TIMED):
            assert probe.at("start", node) > probe.at("judge", before), f"timed {node} was started ahead of its turn"
        else:
            assert probe.at("start", node) < probe.at("judge", before), f"{node} was not started ahead"


def test_a_run_that_breaks_ahead_of_its_turn_fails_its_own_variant_only(
    run_plugin: PluginRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = Probe(monkeypatch)
    target = "loop-plain-answer[openai-ask]"  # third: started while the second is judged
    command = f"{sys.executable} {FAULT_SHIM} crash {target}"
    run = run_plugin(str(UNTIMED), f"--port-cmd={command}", "--port-timeout=30", "-p", "no:randomly")
    nodes = _node_ids(UNTIMED)
    assert probe.at("start", target) < probe.at("judge", nodes[nodes.index(target) - 1]), "the fault was not ahead"
    failed = [line for line in run.output.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 1 and failed[0].endswith(f"::{target}"), run.output
    assert "shim exited with code 7 (during client.run)" in run.output, run.output
    assert f"{len(nodes) - 1} passed" in run.output, run.output


HUNG = "loop-plain-answer[openai-run-uncalled-relay]"  # second: its run starts while the first is judged
PATIENT = 60.0  # a per-call timeout the end of the session must not wait for
BUDGET = 20.0  # the whole session, on a loaded 2-core machine


class _EndAfterFirstVariant:
    """The first variant's run and judging happen, then the session ends (as ``raises``)."""

    def __init__(self, raises: type[BaseException]) -> None:
        self.raises = raises
        self.calls = 0

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        result = yield
        self.calls += 1
        if self.calls == 1:
            raise self.raises("the session ends here")
        return result


@pytest.mark.parametrize(
    ("ending", "args"),
    [(KeyboardInterrupt, ()), (AssertionError, ("-x",))],
    ids=["ctrl-c", "stop-on-first-failure"],
)
def test_a_session_ending_early_does_not_wait_for_the_run_under_way(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ending: type[BaseException], args: tuple[str, ...]
) -> None:
    from inprocess import INNER

    monkeypatch.chdir(REPO)
    probe = Probe(monkeypatch)
    command = f"{sys.executable} {REPO / 'tests' / 'plugin' / 'broken_shim.py'} hang {HUNG}"
    began = time.monotonic()
    result = pytester.runpytest_inprocess(
        *INNER, str(UNTIMED), f"--port-cmd={command}", f"--port-timeout={PATIENT:g}", "-p", "no:randomly", *args,
        plugins=[_EndAfterFirstVariant(ending)], no_reraise_ctrlc=True,
    )
    seconds = time.monotonic() - began
    assert ("run", HUNG) in probe.log, "the hung variant never ran ahead: the test proves nothing"
    assert seconds < BUDGET, f"the session waited {seconds:.1f} s for a run nobody would judge"
    assert not descendants(os.getpid(), None), "the hung shim outlived the session"
    assert result.ret == (pytest.ExitCode.INTERRUPTED if ending is KeyboardInterrupt else pytest.ExitCode.TESTS_FAILED)
