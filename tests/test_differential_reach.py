"""What a default differential search reaches (toolnexus_conformance/differential/rules.py,
toolnexus_conformance/differential/contract.py): every normative rule is exercised by the default
generator or listed, with the reason, as unreachable by generation; and a deliberately
broken reference of each contract family the generator once never drew (a mismatched
Answer id accepted, a relay tool named like a builtin accepted, concurrent waitFor
callbacks made one at a time) is found within 200 scenarios, under the rule it breaks.

Each search runs in this process (one worker: the derandomized stream a default search's
worker 0 draws) and stops at the first find unshrunk (``shrink_budget=0``): what is
asserted is the rule the find breaks, never where in the stream it sits.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from toolnexus_conformance.differential.cli import main
from toolnexus_conformance.differential.pool import search
from toolnexus_conformance.differential.rules import Reach, ScenarioVerdict, normative_rules, unreachable
from toolnexus_conformance.scenario.declarations import BUILTIN_NAMES
from toolnexus_conformance.scenario.model import load_scenario
from toolnexus_conformance.shim.ports import resolve

ROOT = Path(__file__).resolve().parents[1]
MUTANT_SHIM = ROOT / "tests" / "mutants" / "mutant_shim.py"
REACH_EXAMPLES = 300  # a modest search: every reachable rule is exercised well before it
FAMILY_EXAMPLES = 200


def _mutant(name: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} {name}"


def test_the_unreachable_list_names_normative_rules_each_with_a_reason() -> None:
    listed = unreachable()
    assert listed, "the list is read from toolnexus_conformance/differential/unreachable.json"
    for rule, reason in listed.items():
        assert rule in normative_rules(), f"{rule} is listed unreachable but is no normative rule of fixtures/rules.json"
        assert len(reason) > 20, f"{rule} is listed unreachable without a reason"


def test_every_normative_rule_is_reached_by_a_default_search_or_listed_unreachable() -> None:
    reference = resolve("reference", None, None, None)
    result = search(reference, reference, examples=REACH_EXAMPLES, workers=1)
    assert result.found is None, f"the reference differs from itself: {result.failures[:3]}"
    listed = unreachable()
    missing = [rule for rule in result.reach.missing() if rule not in listed]
    assert not missing, (f"normative rules no generated scenario exercised in {REACH_EXAMPLES}: {missing}; "
                         "draw them, or list each with the reason in toolnexus_conformance/differential/unreachable.json")
    reached_anyway = [rule for rule in listed if result.reach.ran[rule]]
    assert not reached_anyway, f"listed unreachable but reached: {reached_anyway}; take them off the list"


def test_reach_depends_on_the_seed_not_on_timing() -> None:
    # two searches of one stream on two shim pairs each (their runs finish in any order):
    # the same scenarios, so the same counts, capped or not
    reference = resolve("reference", None, None, None)
    first, second = (search(reference, reference, examples=60, workers=1, pairs=2) for _ in range(2))
    assert first.reach.tried == second.reach.tried == 60
    assert first.reach.ran == second.reach.ran and first.reach.capped == second.reach.capped


def test_a_rule_finding_stands_only_if_a_second_run_shows_it_again() -> None:
    first = ScenarioVerdict(differences=("openai-run:  $.x: golden 1, port 2",), relations=("golden.observables",),
                            findings=(("susp.declined", "openai-run: [susp.declined] a"),
                                      ("loop.final-text", "openai-run: [loop.final-text] b")))
    again = ScenarioVerdict(findings=(("loop.final-text", "openai-run: [loop.final-text] b"),))
    confirmed = first.confirmed_by(again)
    assert confirmed.rules == ("golden.observables", "loop.final-text")
    assert confirmed.failures == ("openai-run:  $.x: golden 1, port 2", "openai-run: [loop.final-text] b")
    assert not first.confirmed_by(ScenarioVerdict()).findings and first.confirmed_by(ScenarioVerdict())


def test_reach_counts_exactly_below_the_cap_and_at_least_at_it() -> None:
    verdicts = [ScenarioVerdict(ran=frozenset({"loop.final-text", "susp.declined"}))] * 3 + [ScenarioVerdict(ran=frozenset({"loop.final-text"}))]
    reach = Reach.of(verdicts, cap=3)
    assert reach.tried == 4
    assert reach.ran["susp.declined"] == 3 and "susp.declined" in reach.capped
    assert reach.ran["loop.final-text"] == 3 and "loop.final-text" in reach.capped
    below = Reach.of(verdicts, cap=10)
    assert below.ran["loop.final-text"] == 4 and not below.capped
    printed = "\n".join((reach + below).render())
    assert "loop.final-text: ran ≥7" in printed
    assert "loop.openai-endpoint: NOT REACHED (n/a in all 8)" in printed


@pytest.mark.parametrize(("mutant", "rule"), [
    ("answer-id-unchecked", "resume.answer-id-must-match"),
    ("sequential-calls", "relay.inprocess-one-callback-per-call"),
])
def test_a_default_search_finds_each_contract_family_under_its_rule(mutant: str, rule: str) -> None:
    reference = resolve("reference", None, None, None)
    result = search(reference, resolve(None, _mutant(mutant), None, None), examples=FAMILY_EXAMPLES, workers=1,
                    shrink_budget=0)
    assert result.found is not None, f"{FAMILY_EXAMPLES} generated scenarios did not tell mutant {mutant} from the reference"
    assert rule in result.rules, f"the find breaks {result.rules}, not {rule}:\n" + "\n".join(result.failures[:5])
    assert any(f"[{rule}]" in line for line in result.failures), result.failures


@pytest.mark.parametrize("mutant", ["collision-guard-off", "register-skips-relay-guard"])
def test_a_default_search_finds_a_relay_tool_named_like_a_builtin_accepted(mutant: str) -> None:
    """At construction the guard is relay.collision-guard (normative); through runtime
    registration it is relay.collision-guard-register, a spec gap (advisory, never a rule
    finding), so such a find is the golden comparison's difference. Either way the find is a
    toolkit the reference refuses for a relay tool named like a builtin, which the port took."""
    reference = resolve("reference", None, None, None)
    result = search(reference, resolve(None, _mutant(mutant), None, None), examples=FAMILY_EXAMPLES, workers=1,
                    shrink_budget=0)
    assert result.found is not None, f"{FAMILY_EXAMPLES} generated scenarios did not tell mutant {mutant} from the reference"
    toolkit = result.found["toolkit"]
    at_construction = [t["name"] for t in toolkit["tools"] if t.get("relay") and t["name"] in BUILTIN_NAMES]
    registered = [t["name"] for t in toolkit.get("register", []) if t.get("relay") and t["name"] in BUILTIN_NAMES]
    assert result.found.get("expect", {}).get("error") == "toolkit" and (at_construction or registered), result.found
    expected_rule = "relay.collision-guard" if at_construction else "golden.observables"
    assert expected_rule in result.rules, f"the find breaks {result.rules}:\n" + "\n".join(result.failures[:5])
    assert any("$.phases[0].error" in line for line in result.failures), "the port did not refuse the toolkit"


def test_the_cli_prints_reach_and_writes_the_find_with_goldens_and_its_pytest_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = "resume.answer-id-must-match"
    status = main([f"--port-cmd={_mutant('answer-id-unchecked')}", "--examples", str(FAMILY_EXAMPLES), "--workers", "1",
                   "--shrink-budget", "0", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert status == 1, printed
    assert "rule reach:" in printed and f"{rule}: ran" in printed
    verdict = next(line for line in printed.splitlines() if line.startswith("differential: "))
    assert rule in verdict.split(" under ", 1)[1], verdict
    written = sorted(tmp_path.glob("diff-*.json"))
    assert len(written) == 1
    assert rule in load_scenario(written[0]).data["rules"], "the find cites the rule it breaks"
    assert (tmp_path / "golden" / written[0].stem).is_dir(), "the find's goldens are written beside it"
    command = next(line for line in printed.splitlines() if line.startswith("judge it: "))
    assert str(written[0]) in command and "TOOLNEXUS_CONFORMANCE_GOLDEN=" in command
