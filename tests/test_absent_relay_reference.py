"""The byte-identical-absent-relay rule, part (1): every relay-free scenario gives the same
normalized observables on the reference with relay support switched on and off.

Both ports of the registry (``reference`` and ``reference-norelay``) run each base variant
in-process here, through the harness's own runner (``toolnexus_conformance.run.runner.run_variant``) with one
fake provider, so the comparison sees exactly what a golden would. A relay-off mutant of
the reference that changes one observable proves the comparison can fail.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.golden.compare import compare_variant
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.run.observables import observables
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.scenario.model import Variant, load_scenario, scenario_files
from toolnexus_conformance.shim.session import ShimSession

TIMEOUT_S = 10.0
MUTANT_SHIM = Path(__file__).resolve().parent / "mutants" / "mutant_shim.py"


def relay_free_variants() -> list[Variant]:
    found = []
    for path in scenario_files(scenarios_dir()):
        scenario = load_scenario(path)
        if scenario.relay_free:
            found += [v for v in scenario.variants() if not v.uncalled_relay]
    return found


VARIANTS = relay_free_variants()


def observed(variant: Variant, shim: ShimSession, provider: FakeProvider) -> dict[str, Any]:
    return normalize(observables(run_variant(variant, shim, provider, timeout=TIMEOUT_S)))


def test_there_are_relay_free_scenarios() -> None:
    assert VARIANTS, "no relay-free scenario in fixtures/scenarios: the absent-relay rule is untested"


@pytest.mark.rule("absent.byte-identical")
@pytest.mark.parametrize("variant", VARIANTS, ids=[v.node_id for v in VARIANTS])
def test_relay_support_on_and_off_give_identical_observables(
    variant: Variant, reference_shim: ShimSession, norelay_shim: ShimSession, shared_provider: FakeProvider
) -> None:
    on, off = observed(variant, reference_shim, shared_provider), observed(variant, norelay_shim, shared_provider)
    differences = compare_variant(off, on, variant)
    assert not differences.failures, (
        f"{variant.node_id}: relay support switched on changes observables of a relay-free run "
        f"(relay off = expected, relay on = got):\n{differences.render_failures()}"
    )


@pytest.mark.rule("absent.byte-identical")
def test_a_relay_off_mutant_that_changes_an_observable_is_caught(
    reference_shim: ShimSession, shared_provider: FakeProvider, start_shim: Callable[[list[str]], ShimSession]
) -> None:
    # norelay-drops-tool-choice: only OpenAI bodies with tools change, so pick such a variant.
    candidates = [v for v in VARIANTS if v.style == "openai" and v.toolkit()["tools"]]
    assert candidates, "no relay-free OpenAI scenario declares a tool"
    argv = [sys.executable, str(MUTANT_SHIM), "norelay-drops-tool-choice", "--no-relay"]
    mutant = start_shim(argv)
    on, off = observed(candidates[0], reference_shim, shared_provider), observed(candidates[0], mutant, shared_provider)
    differences = compare_variant(off, on, candidates[0])
    assert differences.failures, "the relay-off mutant dropped tool_choice, yet the observables compared equal"
    assert "tool_choice" in differences.render_failures()
