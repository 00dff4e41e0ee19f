"""Running the differential ahead of hypothesis (toolnexus_conformance/differential/ahead.py): the scenario it
reports is the one-at-a-time search's whatever the number of shim pairs, a shim that breaks
before the first difference is an error, not a find, and the shortcut for identical raw
observables never hides a difference.

The property is checked on a stand-in runner first: a port that differs from the expected
one exactly when a turn calls two tools (what the results-reversed mutant shows), answering
after a short delay so that runs overlap. The streams are hypothesis's derandomized one and
a seeded one, whatever they draw: each assertion holds of any stream. One check then runs
the real shims (the reference against that mutant) on the stream as drawn.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shlex
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from random import Random
from typing import Any

import generated_streams
import pytest
from hypothesis import find
from hypothesis.errors import NoSuchExample

from toolnexus_conformance.differential import search as differential
from toolnexus_conformance.differential.ahead import AheadSearch, PairRunner, Shims, Stopped
from toolnexus_conformance.differential.rules import ScenarioVerdict
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
STREAMS: dict[str, Callable[[], Random | None]] = {"derandomized": lambda: None, "seeded": lambda: Random(1)}
RUN_DELAY_S = 0.001  # what a stand-in run takes: long enough for runs to overlap


def two_calls_in_a_turn(scenario: dict[str, Any]) -> bool:
    return any(len(turn.get("toolCalls", [])) >= 2 for turn in scenario["turns"])


class StandIn(PairRunner):
    """A pair runner without shims: its port differs exactly on ``two_calls_in_a_turn``. It
    records the scenarios it ran, in order, and the most it ran at once."""

    def __init__(self, pairs: int) -> None:
        super().__init__(Shims([]), Shims([]), FakeProvider(), pairs)
        self.ran: list[str] = []
        self.most_at_once = 0
        self._running = 0
        self._lock = threading.Lock()

    def differ(self, scenario: dict[str, Any], canonical_json: bytes | None = None) -> ScenarioVerdict:
        with self._lock:
            self.ran.append(json.dumps(scenario, sort_keys=True))
            self._running += 1
            self.most_at_once = max(self.most_at_once, self._running)
        time.sleep(RUN_DELAY_S)
        with self._lock:
            self._running -= 1
        return ScenarioVerdict(differences=("a turn's results reversed",) if two_calls_in_a_turn(scenario) else ())


@functools.cache
def one_at_a_time(stream: str) -> tuple[dict[str, Any] | None, list[str]]:
    """What the plain search finds on ``STREAMS[stream]``, and the distinct scenarios it asked
    about (once per stream: every test of it reads the same answer; it is not changed)."""
    asked: list[str] = []

    def differs(scenario: dict[str, Any]) -> bool:
        text = json.dumps(scenario, sort_keys=True)
        if text not in asked:
            asked.append(text)
        return two_calls_in_a_turn(scenario)

    try:
        return find(scenarios(Features()), differs, settings=search_settings(EXAMPLES), random=STREAMS[stream]()), asked
    except NoSuchExample:
        return None, asked


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("pairs", [1, 3])
def test_running_ahead_reports_the_one_at_a_time_searchs_scenario(stream: str, pairs: int) -> None:
    alone, asked = one_at_a_time(stream)
    runner = StandIn(pairs)
    search = AheadSearch(runner, scenarios(Features()), search_settings(EXAMPLES), STREAMS[stream], depth=2 * pairs)
    try:
        outcome = search.run()
    finally:
        runner.close()
    assert outcome.found == alone, f"{pairs} pair(s) reported another scenario:\n{json.dumps(outcome.found)}"
    assert bool(outcome.failures) == (alone is not None)
    # Every scenario it ran, it ran once; it ran every one the plain search asked about, and
    # past those at most what the pairs had in flight when the first difference came in.
    assert len(runner.ran) == len(set(runner.ran)) == outcome.tried, "a scenario ran twice"
    assert set(asked) <= set(runner.ran)
    assert outcome.tried <= len(asked) + 2 * pairs, f"{outcome.tried} runs for {len(asked)} scenarios asked about"
    assert runner.most_at_once <= pairs, "more runs at once than shim pairs"


class Meeting(StandIn):
    """A stand-in whose first two runs each wait until the other has started."""

    def __init__(self, pairs: int) -> None:
        super().__init__(pairs)
        self.met = threading.Barrier(2, timeout=10)
        self.waits = 2

    def differ(self, scenario: dict[str, Any], canonical_json: bytes | None = None) -> ScenarioVerdict:
        with self._lock:
            meets, self.waits = self.waits > 0, self.waits - 1
        if meets:
            with contextlib.suppress(threading.BrokenBarrierError):  # 10 s alone: the second run never started
                self.met.wait()
        return super().differ(scenario, canonical_json)


def test_several_pairs_do_run_scenarios_at_once() -> None:
    """Without overlap the property above would hold of a one-at-a-time search too."""
    runner = Meeting(3)
    search = AheadSearch(runner, scenarios(Features()), search_settings(EXAMPLES), STREAMS["derandomized"], depth=6,
                         shrink_budget=0)  # fmt: skip
    try:
        search.run()
    finally:
        runner.close()
    assert not runner.met.broken, "three pairs never ran two scenarios at once"


def _mutant(start_shim: Callable[[list[str]], ShimSession], name: str) -> ShimSession:
    return start_shim(shlex.split(f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} {name}"))


@pytest.fixture(scope="module")
def reversed_results(start_shim: Callable[[list[str]], ShimSession]) -> list[ShimSession]:
    return [_mutant(start_shim, "results-reversed") for _ in range(2)]


@pytest.fixture(scope="module")
def references(start_shim: Callable[[list[str]], ShimSession], reference_shim: ShimSession) -> list[ShimSession]:
    return [reference_shim, start_shim(resolve("reference", None, None, None).argv)]


def _ahead(expected: list[ShimSession], actual: list[ShimSession], provider: FakeProvider,
           stop: Callable[[], bool] = lambda: False, shrink_budget: int | None = None) -> tuple[AheadSearch, PairRunner]:
    runner = PairRunner(Shims(expected), Shims(actual), provider, len(expected))
    features = Features.shared_by(expected[0], actual[0])
    search = AheadSearch(runner, scenarios(features), search_settings(EXAMPLES), lambda: None,
                         depth=2 * len(expected), stop=stop, shrink_budget=shrink_budget)
    return search, runner


def test_on_real_shims_the_first_difference_is_the_one_at_a_time_searchs(
    references: list[ShimSession], reversed_results: list[ShimSession], shared_provider: FakeProvider
) -> None:
    """The reference against the mutant, two pairs, unshrunk: the first scenario of the
    stream the real runs tell apart is the first the plain search's condition holds for."""
    features = Features.shared_by(references[0], reversed_results[0])
    first = generated_streams.first(
        features, lambda s: bool(differ(references[0], reversed_results[0], s, provider=shared_provider)), examples=EXAMPLES
    )
    search, runner = _ahead(references, reversed_results, shared_provider, shrink_budget=0)
    try:
        outcome = search.run()
    finally:
        runner.close()
    assert outcome.found == first, f"the search ahead reported another scenario:\n{json.dumps(outcome.found)}"
    assert two_calls_in_a_turn(first), "the mutant differs only where a turn calls two tools"
    assert outcome.failures and all(line.startswith(("openai-", "anthropic-")) for line in outcome.failures)


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
