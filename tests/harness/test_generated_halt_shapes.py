"""Shapes the differential generates and the fixtures do not: a durable resume that halts
again although the scenario states no ``resumedStatus``. The reference's run of each must pass
the rules it cites, and the same run turned into one a rule must catch must fail it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.run.facts import facts_for
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.scenario.model import Variant, load_scenario
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.verdict.evaluate import evaluate
from toolnexus_conformance.verdict.rules import load_all

SHAPES = Path(__file__).resolve().parent / "generated_shapes"


def _variant(path: Path) -> Variant:
    scenario = load_scenario(path)
    return Variant(scenario, scenario.data["styles"][0], scenario.data["entries"][0], uncalled_relay=False)


def _declined(record: RunRecord) -> tuple[str, tuple[str, ...]]:
    outcome = evaluate(record, record.facts, ["relay.declined"], load_all())[0]
    return outcome.status, tuple(outcome.evidence)


@pytest.mark.rule("relay.declined")
@pytest.mark.parametrize("shape", ["declined-then-always-suspends", "declined-then-relay-again"])
def test_a_declined_relay_request_may_be_followed_by_another_halt(
    shape: str, reference_shim: ShimSession, shared_provider: FakeProvider
) -> None:
    variant = _variant(SHAPES / f"{shape}.json")
    record = run_variant(variant, reference_shim, shared_provider, timeout=10.0)
    assert (record.phases[-1].result or {}).get("status") == "pending"
    assert _declined(record) == ("pass", ())
    assert record.facts.resume_halts_again


@pytest.mark.rule("relay.declined")
def test_a_resume_that_halts_where_nothing_suspends_again_still_fails_declined(
    reference_shim: ShimSession, shared_provider: FakeProvider
) -> None:
    variant = _variant(scenarios_dir() / "relay-declined-durable.json")
    record = run_variant(variant, reference_shim, shared_provider, timeout=10.0)
    assert _declined(record) == ("pass", ())
    assert not record.facts.resume_halts_again
    last = record.phases[-1]
    last.result = {**(last.result or {}), "status": "pending"}
    assert _declined(record) == ("fail", ("the run did not continue to a final answer (status 'pending')",))


def test_a_stated_resumed_status_wins_over_what_the_calls_suggest() -> None:
    variant = _variant(SHAPES / "declined-then-always-suspends.json")
    stated = dataclasses.replace(variant.scenario, data={**variant.scenario.data, "expect": {"resumedStatus": "done"}})
    assert facts_for(variant).resume_halts_again
    assert not facts_for(Variant(stated, variant.style, variant.entry, uncalled_relay=False)).resume_halts_again
