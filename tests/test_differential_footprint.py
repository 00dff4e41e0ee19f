"""What a differential search keeps and asks for: nothing of a scenario once it is run (the run
ends its fake-provider session, and the search's shim sessions keep no transcript; both grew
with every scenario: a 3000-scenario search on one worker peaked at 424 MB, 138 MB after),
and no port's declarations."""

from __future__ import annotations

import json
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.differential.ahead import PairRunner, Shims
from toolnexus_conformance.differential.search import shim_for
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.errors import ShimCrashed
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.scenario.model import load_scenario
from toolnexus_conformance.shim.ports import resolve
from toolnexus_conformance.shim.process import ShimProcess
from toolnexus_conformance.shim.session import ShimSession

SCENARIO = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "loop-tool-loop.json"


def _variant(name: str = "openai-stream") -> Any:
    return next(v for v in load_scenario(SCENARIO).variants() if v.name == name)


def test_a_run_ends_its_provider_session(reference_shim: ShimSession) -> None:
    with FakeProvider() as provider:
        record = run_variant(_variant(), reference_shim, provider, timeout=10.0)
        assert record.first.result is not None and len(record.first.requests) == 3, "the run must have happened"
        assert provider.live_sessions == 0, "the session outlived its run, with every request and reply in it"


class _CrashingShim:
    """A shim whose every call fails the way a crashed process does."""

    def call(self, method: str, params: Any = None, *, timeout: float, handler: Any = None) -> Any:
        raise ShimCrashed(f"shim exited with code 3 during {method}")


def test_a_run_that_raises_ends_its_provider_session_too() -> None:
    with FakeProvider() as provider, pytest.raises(ShimCrashed):
        run_variant(_variant(), _CrashingShim(), provider, timeout=10.0)  # type: ignore[arg-type]
    assert provider.live_sessions == 0


def test_a_search_session_keeps_no_transcript_and_any_other_keeps_one() -> None:
    with ExitStack() as stack:
        searching = shim_for(resolve("reference", None, None, None), stack)
        searching.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=10.0)
        assert searching.process.transcript.entries == []
    assert ShimProcess().transcript.keep, "a conformance run's shim keeps its transcript for --artifacts"


class _Counting:
    """A shim session that counts the methods it is called with."""

    def __init__(self, session: ShimSession) -> None:
        self.session, self.methods = session, Counter[str]()

    def call(self, method: str, params: Any = None, *, timeout: float, handler: Any = None) -> Any:
        self.methods[method] += 1
        return self.session.call(method, params, timeout=timeout, handler=handler)

    def __getattr__(self, name: str) -> Any:  # restart, prepare_restart: as the session's
        return getattr(self.session, name)


def test_a_search_asks_no_port_for_its_declarations(reference_shim: ShimSession, norelay_shim: ShimSession) -> None:
    # The search compares observables, and the declarations are none (run/observables.py): a
    # toolkit.describe per run was two round trips a scenario for nothing. Only a scenario
    # that draws its toolkit's construction asks (test_declarations_are_asked_for_...).
    expected, under_test = _Counting(reference_shim), _Counting(norelay_shim)
    scenario = json.loads(SCENARIO.read_text(encoding="utf-8")) | {"styles": ["openai"], "entries": ["run"]}
    with FakeProvider() as provider:
        runner = PairRunner(Shims([expected]), Shims([under_test]), provider, 1)  # type: ignore[list-item]
        try:
            assert not runner.differ(scenario).failures
        finally:
            runner.close()
    assert expected.methods == under_test.methods == Counter({"client.run": 1})


def test_declarations_are_asked_for_where_the_construction_is_drawn(reference_shim: ShimSession,
                                                                    norelay_shim: ShimSession) -> None:
    # builtins on: decl.builtin-names reads toolkit.describe, so both ports are asked once
    expected, under_test = _Counting(reference_shim), _Counting(norelay_shim)
    scenario = json.loads(SCENARIO.read_text(encoding="utf-8")) | {"styles": ["openai"], "entries": ["run"]}
    scenario["toolkit"] = {**scenario["toolkit"], "builtins": True}
    with FakeProvider() as provider:
        runner = PairRunner(Shims([expected]), Shims([under_test]), provider, 1)  # type: ignore[list-item]
        try:
            verdict = runner.differ(scenario)
        finally:
            runner.close()
    assert not verdict.failures and "decl.builtin-names" in verdict.ran
    assert expected.methods == under_test.methods == Counter({"client.run": 1, "toolkit.describe": 1})
