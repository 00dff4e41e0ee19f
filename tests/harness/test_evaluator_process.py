"""The evaluator process gives exactly what ``evaluate`` gives in pytest's process, and
whenever it cannot (not started, killed, stuck, a record it cannot take, an error of its
own), the record is evaluated in pytest's process and the reason is kept for the summary."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.scenario.model import load_scenario
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.verdict import evaluator_process
from toolnexus_conformance.verdict.evaluate import evaluate
from toolnexus_conformance.verdict.evaluator_process import EvaluatorProcess
from toolnexus_conformance.verdict.rules import load_all
from toolnexus_conformance.verdict.selection import rules_of

# A relay-free, a relay and a durable-resume scenario: records with and without phases 2.
SCENARIOS = ("loop-tool-loop", "relay-single-durable", "susp-waitfor-concurrent")
START_S = 30.0


@pytest.fixture(scope="module")
def records(reference_shim: ShimSession, shared_provider: FakeProvider) -> list[RunRecord]:
    found = []
    for scenario_id in SCENARIOS:
        variants = list(load_scenario(scenarios_dir() / f"{scenario_id}.json").variants())
        found += [run_variant(v, reference_shim, shared_provider, timeout=10.0) for v in variants[:2]]
    return found


def _broken(record: RunRecord) -> RunRecord:
    """The same run with its final answer gone: several rules must fail on it, with evidence."""
    first = dataclasses.replace(record.first, result=None)
    return dataclasses.replace(record, phases=[first, *record.phases[1:]])


@pytest.fixture(scope="module")
def evaluator() -> Iterator[EvaluatorProcess]:
    """One evaluator for the tests that leave it working (each start is an interpreter and the rules)."""
    process = EvaluatorProcess(load_all())
    yield process
    process.close()


@pytest.fixture
def own_evaluator() -> Iterator[EvaluatorProcess]:
    process = EvaluatorProcess(load_all())
    yield process
    process.close()


def _here(record: RunRecord) -> list:
    return evaluate(record, record.facts, rules_of(record.variant), load_all())


def test_outcomes_from_the_evaluator_process_are_those_of_pytests_process(
    evaluator: EvaluatorProcess, records: list[RunRecord]
) -> None:
    assert evaluator.wait_ready(START_S), evaluator.fallbacks
    cases = [*records, *(_broken(r) for r in records)]
    tokens = [evaluator.submit(r, rules_of(r.variant)) for r in cases]
    assert None not in tokens, "a ready evaluator takes every record"
    remote = [evaluator.outcomes(t, r, rules_of(r.variant)) for t, r in zip(tokens, cases, strict=True)]
    assert remote == [_here(r) for r in cases]
    assert any(o.status == "fail" and o.evidence for found in remote[len(records):] for o in found), "the broken runs fail"
    assert evaluator.fallbacks == []


def test_a_killed_evaluator_leaves_the_verdicts_to_pytests_process_and_says_so(
    own_evaluator: EvaluatorProcess, records: list[RunRecord]
) -> None:
    evaluator = own_evaluator
    assert evaluator.wait_ready(START_S)
    record = _broken(records[0])
    token = evaluator.submit(record, rules_of(record.variant))
    assert token is not None
    worker = evaluator._process
    assert worker is not None
    worker.kill()
    worker.wait()
    evaluator._reader.join(5)  # it has seen the worker go
    # Answered before the kill or not, the outcomes are those of pytest's process.
    assert evaluator.outcomes(token, record, rules_of(record.variant)) == _here(record)
    later = records[1]
    assert evaluator.submit(later, rules_of(later.variant)) is None
    assert evaluator.outcomes(None, later, rules_of(later.variant)) == _here(later)
    assert evaluator.fallbacks[-1] == f"{later.facts.node_id}: the evaluator process exited (code -9)"
    assert all(f.endswith("the evaluator process exited (code -9)") for f in evaluator.fallbacks), evaluator.fallbacks


def test_an_evaluator_that_never_starts_is_not_used(monkeypatch: pytest.MonkeyPatch, records: list[RunRecord]) -> None:
    monkeypatch.setattr(evaluator_process, "WORKER_ARGS", ("-c", "import sys; sys.exit('cannot load the checks')"))
    broken = EvaluatorProcess(load_all())
    try:
        assert not broken.wait_ready(START_S)
        record = records[0]
        assert broken.submit(record, rules_of(record.variant)) is None
        assert broken.outcomes(None, record, rules_of(record.variant)) == _here(record)
        assert broken.fallbacks == [
            f"{record.facts.node_id}: the evaluator process exited before it was ready (code 1: cannot load the checks)"
        ]
    finally:
        broken.close()


def test_a_stuck_evaluator_is_given_up_on(monkeypatch: pytest.MonkeyPatch, records: list[RunRecord], tmp_path: Path) -> None:
    stuck = tmp_path / "stuck.py"
    stuck.write_text("import sys, time\nsys.stdout.write('ready\\n'); sys.stdout.flush()\ntime.sleep(60)\n", encoding="utf-8")
    monkeypatch.setattr(evaluator_process, "WORKER_ARGS", (str(stuck),))
    monkeypatch.setattr(evaluator_process, "ANSWER_TIMEOUT_S", 0.3)
    process = EvaluatorProcess(load_all())
    try:
        assert process.wait_ready(START_S)
        record = records[0]
        token = process.submit(record, rules_of(record.variant))
        assert token is not None
        assert process.outcomes(token, record, rules_of(record.variant)) == _here(record)
        assert process.fallbacks == [f"{record.facts.node_id}: the evaluator process gave no answer within 0.3 s"]
        assert process.submit(record, rules_of(record.variant)) is None, "a stuck evaluator is not asked again"
    finally:
        process.close()


def test_a_record_that_cannot_travel_is_evaluated_here(evaluator: EvaluatorProcess, records: list[RunRecord]) -> None:
    assert evaluator.wait_ready(START_S)
    record = records[0]
    odd = dataclasses.replace(record, phases=[dataclasses.replace(record.first, params={**record.first.params, "x": lambda: 0})])
    assert evaluator.submit(odd, rules_of(odd.variant)) is None
    assert evaluator.outcomes(None, odd, rules_of(odd.variant)) == _here(odd)
    assert len(evaluator.fallbacks) == 1 and "the record could not be pickled" in evaluator.fallbacks[0]
    evaluator.fallbacks.clear()
    assert evaluator.submit(record, rules_of(record.variant)) is not None, "the next record goes to the evaluator again"


def test_an_error_in_the_evaluator_is_told_and_the_record_evaluated_here(
    monkeypatch: pytest.MonkeyPatch, records: list[RunRecord], tmp_path: Path
) -> None:
    # A worker whose evaluate raises on every record (a harness bug there, not in a check).
    raising = tmp_path / "raising.py"
    raising.write_text(
        "import sys\nimport toolnexus_conformance.verdict.evaluator_process as e\n"
        "def boom(*args):\n    raise MemoryError('out of memory')\n"
        "e.evaluate = boom\nsys.exit(e.main())\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(evaluator_process, "WORKER_ARGS", (str(raising),))
    process = EvaluatorProcess(load_all())
    try:
        assert process.wait_ready(START_S)
        record = records[0]
        token = process.submit(record, rules_of(record.variant))
        assert process.outcomes(token, record, rules_of(record.variant)) == _here(record)
        assert process.fallbacks == [f"{record.facts.node_id}: the evaluator raised MemoryError: out of memory"]
    finally:
        process.close()


def test_a_package_folder_where_pytest_runs_is_not_the_one_the_worker_imports(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A port repository may hold a folder of that name; pytest's process did not import it.
    (tmp_path / "toolnexus_conformance").mkdir()
    (tmp_path / "toolnexus_conformance" / "__init__.py").write_text("raise SystemExit('the wrong harness')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    process = EvaluatorProcess(load_all())
    try:
        assert process.wait_ready(START_S), process.fallbacks or process._stopped
    finally:
        process.close()
