"""The plugin with the evaluator process (each variant's checks in a process of their own
while the next variant runs): the same verdicts, failures and report as without it; a
variant run ahead that breaks fails as itself, never as the variant it was run beside.

The plugin turns the evaluator on for serial runs of at least
``MIN_VARIANTS_TO_EVALUATE_ASIDE`` variants; these runs lower that bar to a few scenarios.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inprocess import INNER
from plugin_runner import REPO

import toolnexus_conformance.plugin.hooks
import toolnexus_conformance.plugin.items
from toolnexus_conformance.plugin.items import SESSION_KEY

# Failing (relay variants on a port without relay) and passing variants, a durable resume
# among them, so failures, passes and a second phase all travel to the evaluator.
SCENARIOS = [f"fixtures/scenarios/{name}.json" for name in ("loop-tool-loop", "relay-single-durable", "relay-declined-durable")]


class EvaluatorSeen:
    """Plugin object: waits for the evaluator process to be up before the first variant, and
    reads how many records it took before it closes."""

    def __init__(self) -> None:
        self.taken: int | None = None
        self.fallbacks: list[str] = []
        self.process: Any = None

    def pytest_runtestloop(self, session: pytest.Session) -> None:
        # A short run would otherwise be over before the process is up (the records of
        # variants run while it starts are evaluated in pytest's process, by design).
        evaluator = session.config.stash[SESSION_KEY].evaluator
        if evaluator is not None:
            assert evaluator.wait_ready(30), evaluator.fallbacks

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        evaluator = session.config.stash[SESSION_KEY].evaluator
        if evaluator is not None:
            self.taken, self.fallbacks = evaluator._next_token, list(evaluator.fallbacks)
            self.process = evaluator._process


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, aside: bool, *args: str) -> tuple[int, str, EvaluatorSeen]:
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(toolnexus_conformance.plugin.hooks, "MIN_VARIANTS_TO_EVALUATE_ASIDE", 1 if aside else 10**9)
    seen = EvaluatorSeen()
    result = pytester.runpytest_inprocess(*INNER, "-p", "no:randomly", *args, plugins=[seen], no_reraise_ctrlc=True)
    return int(result.ret), result.stdout.str() + result.stderr.str(), seen


def _comparable(output: str) -> str:
    return re.sub(r" in \d+\.\d+s", " in Ns", output)


def test_the_verdicts_failures_and_report_are_those_of_a_run_without_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    outputs: dict[bool, str] = {}
    reports: dict[bool, Any] = {}
    for aside in (False, True):
        report = tmp_path / f"report-{aside}.json"
        code, outputs[aside], seen = _run(
            pytester, monkeypatch, aside, *SCENARIOS, "--port=reference-norelay", f"--conformance-report={report}"
        )
        assert code == 1, outputs[aside]
        reports[aside] = json.loads(report.read_text(encoding="utf-8"))
        if aside:
            assert seen.taken, "the evaluator process took no record: the run did not test it"
            assert seen.fallbacks == []
            assert seen.process.poll() == 0, "the evaluator process outlived the run"
        else:
            assert seen.taken is None
    assert re.search(r"\d+ failed, \d+ passed", outputs[True].splitlines()[-1]), outputs[True][-2000:]
    assert _comparable(outputs[True]) == _comparable(outputs[False])
    assert reports[True] == reports[False]


def test_a_bug_while_running_ahead_fails_the_variant_it_hit(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    target = "loop-tool-loop[openai-stream]"
    real = toolnexus_conformance.plugin.items.run_variant

    def run_variant(variant: Any, *args: Any, **kwargs: Any) -> Any:
        if variant.node_id == target:
            raise RuntimeError(f"harness bug while running {variant.node_id}")
        return real(variant, *args, **kwargs)

    monkeypatch.setattr(toolnexus_conformance.plugin.items, "run_variant", run_variant)
    code, output, seen = _run(pytester, monkeypatch, True, SCENARIOS[0], "--port=reference", "-v")
    assert code == 1, output
    assert seen.taken, "the evaluator process took no record"
    assert re.search(rf"::{re.escape(target)} FAILED", output), output
    assert len(re.findall(r" FAILED", output.split("= FAILURES =")[0])) == 1, output
    assert f"RuntimeError: harness bug while running {target}" in output
    assert re.search(r"\d+ failed, \d+ passed", output.splitlines()[-1])


def test_ctrl_c_while_running_ahead_ends_the_run_and_the_evaluator(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    real = toolnexus_conformance.plugin.items.run_variant
    runs: list[str] = []

    def run_variant(variant: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append(variant.node_id)
        if len(runs) == 3:  # the third variant, run during the second one's item
            raise KeyboardInterrupt
        return real(variant, *args, **kwargs)

    monkeypatch.setattr(toolnexus_conformance.plugin.items, "run_variant", run_variant)
    code, output, seen = _run(pytester, monkeypatch, True, SCENARIOS[0], "--port=reference")
    assert code == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output
    assert seen.process is not None and seen.process.poll() is not None, "the evaluator process outlived the run"
