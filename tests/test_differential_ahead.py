"""Running the differential ahead of hypothesis (toolnexus_conformance/differential/ahead.py): the scenario it
reports is the one-at-a-time search's whatever the number of shim pairs, a shim that breaks
before the first difference is an error, not a find, and the shortcut for identical raw
observables never hides a difference.

The mutant reverses a finished turn's tool results: only scenarios with two calls in a turn
show it, so the first difference comes several scenarios into the stream, while runs of
later scenarios are still in flight.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from random import Random
from typing import Any

import generated_streams
import pytest
from hypothesis import find

from toolnexus_conformance.differential import search as differential
from toolnexus_conformance.differential.ahead import AheadSearch, PairRunner, Shims, Stopped
from toolnexus_conformance.differential.search import (
    Features,
    as_scenario,
    differ,
    scenarios,
    search_settings,
    variant_failures,
)
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.errors import ShimCrashed
from toolnexus_conformance.shim.ports import resolve
from toolnexus_conformance.shim.session import ShimSession

# Streams drawn by one xdist worker are read by the others (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("shared_generated_streams")
MUTANT_SHIM = Path(__file__).resolve().parent / "mutants" / "mutant_shim.py"
EXAMPLES = 40
# The stream searched by the first test. The test needs its first difference to come after
# runs a pair could have in flight, and asserts that first: a generator change that moves the
# difference earlier fails there, loudly, instead of testing less.
SEED = 7


def _mutant(start_shim: Callable[[list[str]], ShimSession], name: str) -> ShimSession:
    return start_shim(shlex.split(f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} {name}"))


@pytest.fixture(scope="module")
def reversed_results(start_shim: Callable[[list[str]], ShimSession]) -> list[ShimSession]:
    return [_mutant(start_shim, "results-reversed") for _ in range(2)]


@pytest.fixture(scope="module")
def references(start_shim: Callable[[list[str]], ShimSession], reference_shim: ShimSession) -> list[ShimSession]:
    return [reference_shim, start_shim(resolve("reference", None, None, None).argv)]


def _ahead(expected: list[ShimSession], actual: list[ShimSession], provider: FakeProvider,
           stop: Callable[[], bool] = lambda: False, seed: int | None = None) -> tuple[AheadSearch, PairRunner]:
    runner = PairRunner(Shims(expected), Shims(actual), provider, len(expected))
    features = Features.shared_by(expected[0], actual[0])
    search = AheadSearch(runner, scenarios(features), search_settings(EXAMPLES), lambda: None if seed is None else Random(seed),
                         depth=2 * len(expected), stop=stop)
    return search, runner


def test_running_ahead_reports_the_one_at_a_time_searchs_scenario(
    references: list[ShimSession], reversed_results: list[ShimSession], shared_provider: FakeProvider
) -> None:
    seen: list[bool] = []
    distinct: set[str] = set()

    def differs(scenario: dict[str, Any]) -> bool:
        distinct.add(json.dumps(scenario, sort_keys=True))
        seen.append(bool(differ(references[0], reversed_results[0], scenario, provider=shared_provider)))
        return seen[-1]

    features = Features.shared_by(references[0], reversed_results[0])
    alone = find(scenarios(features), differs, settings=search_settings(EXAMPLES), random=Random(SEED))
    assert seen.index(True) >= 2, "the first difference must come after runs a pair could have in flight"
    for pairs in (1, 2):
        search, runner = _ahead(references[:pairs], reversed_results[:pairs], shared_provider, seed=SEED)
        try:
            outcome = search.run()
        finally:
            runner.close()
        assert outcome.found == alone, f"{pairs} pair(s) reported another scenario:\n{json.dumps(outcome.found)}"
        assert outcome.failures and all(line.startswith(("openai-", "anthropic-")) for line in outcome.failures)
        # each distinct scenario once, plus at most the runs ahead of the first difference
        assert outcome.tried <= len(distinct) + 2 * pairs, f"the replay ran scenarios again: {outcome.tried} runs"


def test_a_search_that_must_stop_stops_before_running_anything(
    references: list[ShimSession], reversed_results: list[ShimSession], shared_provider: FakeProvider
) -> None:
    search, runner = _ahead(references[:1], reversed_results[:1], shared_provider, stop=lambda: True)
    try:
        with pytest.raises(Stopped):
            search.run()
    finally:
        runner.close()
    assert search.tried == 0


def test_a_shim_that_breaks_before_any_difference_is_an_error_not_a_find(
    references: list[ShimSession], shared_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    real = Shims.run

    def breaking(self: Shims, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 7:
            raise ShimCrashed("the shim exited with status 1 in the middle of a call", command=["shim"])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Shims, "run", breaking)
    search, runner = _ahead(references[:1], references[1:], shared_provider)
    try:
        with pytest.raises(ShimCrashed, match="in the middle of a call"):
            search.run()
    finally:
        runner.close()


def test_identical_observables_agree_but_true_is_not_1(monkeypatch: pytest.MonkeyPatch) -> None:
    # Any scenario serves (the records below are made up): the first generated, unshrunk
    # (shrinking it to the smallest cost ~2 s).
    variant = next(as_scenario(generated_streams.first(Features(), lambda s: True)).variants())
    monkeypatch.setattr(differential, "observables", lambda tree: tree)  # the "records" below are observables
    tree = {"scenario": variant.scenario.id, "variant": variant.name,
            "phases": [{"entry": "run", "result": {"status": "ok", "text": "done", "limit": 1}}]}
    same = json.loads(json.dumps(tree))
    assert variant_failures(variant, tree, same) == []  # type: ignore[arg-type]
    boolean = json.loads(json.dumps(tree))
    boolean["phases"][0]["result"]["limit"] = True
    assert boolean == tree, "Python's == calls them equal: the comparison must not use it"
    failures = variant_failures(variant, tree, boolean)  # type: ignore[arg-type]
    assert any("limit" in line for line in failures), failures
