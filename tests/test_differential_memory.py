"""A long differential search keeps nothing of a scenario once it is run: the run ends its
fake-provider session, and the search's shim sessions keep no transcript. Both grew with
every scenario (a 3000-scenario search on one worker peaked at 424 MB, 138 MB after)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from harness.differential_forked import session_for
from harness.errors import ShimCrashed
from harness.fake_provider import FakeProvider
from harness.ports import resolve
from harness.runner import run_variant
from harness.scenario import load_scenario
from harness.shim_process import ShimProcess
from harness.shim_session import ShimSession

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
    argv = resolve("reference", None, None, None).argv
    with ExitStack() as stack:
        searching = stack.enter_context(session_for(argv))
        searching.ensure_alive()
        searching.call("toolkit.describe", {"toolkit": {"tools": []}}, timeout=10.0)
        assert searching.process.transcript.entries == []
    assert ShimProcess().transcript.keep, "a conformance run's shim keeps its transcript for --artifacts"
