"""The differential that knows the known (toolnexus_conformance/differential/known.py, differential/finds.py)
and the generator's host-side draws (toolnexus_conformance/differential/draws.py, differential/wire.py's
extra block).

The broken port is a mutant of the reference whose RunResult carries an extra snake_case key
(keys.run-result, an implicit rule of every variant), so every generated scenario shows
the same two kinds: that rule failing as a divergence, and the golden comparison.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import generated_streams
import pytest
from hypothesis import Phase, find, settings

from toolnexus_conformance.differential.cli import main
from toolnexus_conformance.differential.draws import DELAY_MS
from toolnexus_conformance.differential.finds import GOLDEN_ENV
from toolnexus_conformance.differential.known import Finding, Judge, Judged, Known, NewDifference, SearchReport
from toolnexus_conformance.differential.search import Features, as_scenario, scenarios
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.scenario.model import load_scenario
from toolnexus_conformance.shim.ports import resolve
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.verdict.expectations import Entry, Expectations

REPO = Path(__file__).resolve().parents[1]
# Streams drawn by one xdist worker are read by the others (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("shared_generated_streams")
MUTANT_SHIM = REPO / "tests" / "mutants" / "mutant_shim.py"
MUTANT_CMD = f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} run-result-snake"
GOLDEN_KINDS = [("golden.observables", "golden"), ("absent.byte-identical", "golden")]


# What the run-result-snake mutant's keys.run-result failure says, observed on a fixture.
SNAKE_NOTE = "phase 1 RunResult.tool_call_count: unexpected key (did you mean 'toolCallCount'?)"


def _expectations(tmp_path: Path, kinds: list[tuple[str, str]], notes: dict[str, str] | None = None) -> Path:
    """An expectations file whose entries name other scenarios: rule, reason and the note's
    observation can match."""
    notes = notes or {}
    lines = [
        f'[[expected]]\nkey = "some-fixture[openai-run]::{rule}"\nreason = "{reason}"\nnote = {json.dumps(notes.get(rule, ""))}\n'
        for rule, reason in kinds
    ]
    path = tmp_path / "known.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _inner_pytest(*args: str, golden: Path) -> tuple[int, str]:
    env = {**os.environ, GOLDEN_ENV: str(golden)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


# --- what "explained" means ----------------------------------------------------------------


def test_explained_means_same_rule_class_and_observation_whatever_the_scenario() -> None:
    known = Known.from_expectations(Expectations(None, [
        Entry("decl-builtins[openai-run]::golden.observables", "golden",
              note="observables differ from the golden: $.phases[0].result.limit: golden <absent>, port null"),
        Entry("relay-x[anthropic-ask]::*", "capability"),
        Entry("halt-y[openai-*]::halt.*", "divergence",
              note="the returned transcript holds results for calls after the halted one: ['call_k2']"),
    ]))

    def finding(rule: str, reason: str, evidence: str = "evidence", paths: tuple[str, ...] = ()) -> Finding:
        return Finding("openai-stream", rule, reason, evidence, paths)

    limit = ("$.phases[*].result.limit",)
    assert known.explains(finding("golden.observables", "golden", paths=limit)), "another scenario's entry explains the place"
    assert not known.explains(finding("golden.observables", "golden", paths=("$.phases[*].requests[*].tools",))), \
        "a golden difference at a place no note names is new"
    assert not known.explains(finding("golden.observables", "divergence", paths=limit)), "a different reason class is new"
    assert known.explains(finding("relay.prompt-text", "capability")), "a variant-wide capability entry explains any rule"
    held = "the returned transcript holds results for calls after the halted one: ['call_x9', 'call_x8']"
    assert known.explains(finding("halt.transcript", "divergence", held)), "the same observation, other values"
    assert not known.explains(finding("halt.transcript", "divergence", "the transcript lost call_x9")), \
        "the rule failing another way is new"
    assert not known.explains(finding("susp.placeholder", "divergence", held)), "a different rule is new"
    assert known.noted == {"$.phases[*].result.limit"}, "the notes' paths, generalized, are the summary's hint"


def test_the_report_names_counts_per_rule_and_says_none_new() -> None:
    report = SearchReport(examples=40, differing=7, noted=frozenset({"$.phases[*].result.limit"}))
    report.known.update({("keys.run-result", "divergence"): 7, ("golden.observables", "golden"): 3})
    golden = ("golden.observables", "golden")
    report.known_paths.update({(golden, "$.phases[*].result.limit"): 3, (golden, "$.phases[*].requests[*].tools"): 1})
    lines = report.render("golang", "reference")
    assert lines[0] == "differential: 40 generated scenarios tried on golang against reference; 7 showed a difference"
    assert "  keys.run-result (divergence): 7" in lines and "  golden.observables (golden): 3" in lines
    at = lines.index("  golden.observables (golden): 3")
    assert lines[at + 1:at + 3] == ["      differs at $.phases[*].result.limit: 3",
                                    "      differs at $.phases[*].requests[*].tools: 1  (no note of the file mentions this path)"]
    assert lines[-1] == "new differences: none"
    new = Finding("openai-run", "loop.final-text", "divergence", "text differs")
    report.new.append(NewDifference(new.kind, {}, Judged((new,))))
    report.new_seen[new.kind] = 2
    rendered = report.render("golang", "reference")
    assert "new difference: loop.final-text (divergence), in 2 generated scenario(s)" in rendered
    assert "new differences: none" not in rendered


# --- the search, end to end through the CLI ------------------------------------------------


def test_a_known_difference_is_skipped_and_the_search_runs_on_to_none_new(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = _expectations(tmp_path, [("keys.run-result", "divergence"), *GOLDEN_KINDS], {"keys.run-result": SNAKE_NOTE})
    out = tmp_path / "finds"
    status = main([f"--port-cmd={MUTANT_CMD}", f"--expectations={known}", "--examples", "12", "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "12 generated scenarios tried" in printed, printed
    skipped = [line for line in printed.splitlines() if line.startswith("  keys.run-result (divergence): ")]
    differed = re.search(r"; (\d+) showed a difference", printed)
    # A run a raising waitFor aborts, or a toolkit the port refuses, has no RunResult to
    # misname; most runs have one, and every one that differs is the known difference.
    assert differed and int(differed[1]) >= 6, f"the mutant's RunResult keys differ in most scenarios:\n{printed}"
    assert skipped and int(skipped[0].rsplit(":", 1)[1]) == int(differed[1]), f"every difference is the known one:\n{printed}"
    assert "new differences: none" in printed
    assert not out.exists(), "nothing new, nothing written"


def test_a_new_difference_is_shrunk_to_a_scenario_that_fails_the_same_rule_under_pytest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "finds"
    known = _expectations(tmp_path, GOLDEN_KINDS)  # the golden kinds are known; keys.run-result is not
    status = main([f"--port-cmd={MUTANT_CMD}", f"--expectations={known}", "--examples", "8", "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 1, printed
    assert "new difference: keys.run-result (divergence)" in printed, printed
    (found,) = sorted(out.glob("*.json"))
    scenario = load_scenario(found)  # schema-valid, file name == id, known rules
    # the generator's smallest scenario: one call of one replying tool, then the final text
    data = scenario.data
    calls = [c for t in data["turns"] for c in t.get("toolCalls", [])]
    assert len(data["turns"]) == 2 and len(calls) == 1 and len(data["toolkit"]["tools"]) == 1, json.dumps(data)
    assert not {"host", "resume", "storedHistory"} & set(data), f"not shrunk: {json.dumps(data)}"
    assert sorted(p.name for p in (out / "golden" / scenario.id).iterdir()) == [f"{v.name}.json" for v in scenario.variants()
                                                                               if not v.uncalled_relay]
    assert f"{GOLDEN_ENV}=" in printed and str(found) in printed, "the command that judges the find is printed"

    code, report = _inner_pytest(str(found), f"--port-cmd={MUTANT_CMD}", golden=out / "golden")
    assert code == 1, report
    assert "[keys.run-result] (normative, divergence)" in report, report
    code, report = _inner_pytest(str(found), "--port=reference", golden=out / "golden")
    assert code == 0, f"the reference must pass its own find (goldens from its runs):\n{report}"


def test_an_unreadable_expectations_file_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[expected]]\nkey = "x[openai-run]::keys.run-result"\nreason = "wrong"\n', encoding="utf-8")
    assert main(["--port=reference", f"--expectations={bad}", "--examples", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("differential: ") and str(bad) in err and "Traceback" not in err


# --- the host-side draws --------------------------------------------------------------------

ALL = Features(relay=True, resume=True, hooks=True, store=True)


def _find(features: Features, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first generated scenario of 1000 that is ``wanted``, unshrunk (generated_streams.py)."""
    found = generated_streams.first(features, wanted, examples=1000)
    as_scenario(found)  # raises on a schema violation
    return found


def _delayed(scenario: dict[str, Any]) -> set[str]:
    return {t["name"] for t in scenario["toolkit"]["tools"] if t.get("behaviour", {}).get("delayMs") == DELAY_MS}


def test_store_draws_need_the_store_capability() -> None:
    def uses_store(s: dict[str, Any]) -> bool:
        return bool("storedHistory" in s or s.get("streamWithId") or s.get("host", {}).get("store"))

    # 400 scenarios have the power of the 1000 this searched before: with the store allowed,
    # 45% of the stream's first 1000 use it (an ask's stored history 21%, a stream's id 13%,
    # a run's store 11%). A leak that let even the rarest of the three kinds through at its
    # rate would go unseen in 400 scenarios with probability 0.893^400 = 2e-20; one ten times
    # rarer than any store use (4.5%) with 0.955^400 = 1e-8. These are the first 400 of the
    # 1000-example stream, the very 400 the raising-waitFor test of test_differential.py scans:
    # a test run draws them once.
    drawn = generated_streams.every(Features(relay=True, resume=True, hooks=True), 400)
    assert len(drawn) == 400
    assert not [s for s in drawn if uses_store(s)], "a scenario without the store capability uses the store"
    assert uses_store(_find(ALL, uses_store))


def test_generated_delays_histories_and_extras_are_cited_and_stay_deterministic(
    reference_shim: ShimSession, start_shim: Callable[[list[str]], ShimSession], shared_provider: FakeProvider
) -> None:
    def delayed_call_in_first_turn(s: dict[str, Any]) -> bool:
        return any(c["name"] in _delayed(s) for c in s["turns"][0].get("toolCalls", []))

    # The furthest in the stream first (the 14th): the other two are read from what it drew.
    extra = _find(ALL, lambda s: s["styles"] == ["openai"] and s["entries"] == ["run"]
                  and "extraResponseKeys" in s["turns"][0].get("extra", {}))
    delayed = _find(ALL, delayed_call_in_first_turn)
    assert "loop.results-in-call-order" in delayed["rules"]
    history = _find(ALL, lambda s: "storedHistory" in s and s["entries"] == ["ask"])
    assert {"store.ask-loads-history", "store.verbatim-round-trip"} <= set(history["rules"])
    assert "loop.assistant-extra-keys" in extra["rules"]

    judge = Judge(reference_shim, start_shim(resolve("reference", None, None, None).argv), shared_provider)

    record = run_variant(next(as_scenario(history).variants()), reference_shim, shared_provider, timeout=10)
    sent = json.dumps(record.first.requests[0], ensure_ascii=False)
    assert history["storedHistory"][0]["content"] in sent, "the stored conversation was not continued"
    for scenario in (delayed, history, extra):
        assert judge.findings(scenario) == Judged(()), f"not deterministic on the reference: {json.dumps(scenario)}"


def test_judged_scenarios_surface_a_difference_as_the_rule_it_breaks(
    reference_shim: ShimSession, start_shim: Callable[[list[str]], ShimSession], shared_provider: FakeProvider
) -> None:
    """A mutant that adds a '.' to the final text: as plain golden differences its findings
    would hide behind a port's known golden failures; judged, loop.final-text names it."""
    dotted = start_shim(shlex.split(f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} final-text-dotted"))
    judge = Judge(reference_shim, dotted, shared_provider)
    simple = settings(max_examples=50, derandomize=True, database=None, phases=[Phase.generate])
    plain = find(scenarios(Features()), lambda s: "host" not in s, settings=simple)
    judged = find(scenarios(Features(), judged=True), lambda s: "host" not in s, settings=simple)
    assert {f.kind for f in judge.findings(plain).port} <= set(GOLDEN_KINDS)
    kinds = {f.kind for f in judge.findings(judged).port}
    assert ("loop.final-text", "divergence") in kinds, kinds
    assert not {f.kind for f in judge.findings(judged).against}, "the reference passes every judged rule here"


def test_a_rule_failing_on_the_expected_port_too_is_not_the_ports_difference(
    reference_shim: ShimSession, start_shim: Callable[[list[str]], ShimSession], shared_provider: FakeProvider
) -> None:
    """A check that fails every run (a check misjudging a generated shape) must not be blamed
    on the port: it lands in ``against``; the port's own difference stays in ``port``."""
    from toolnexus_conformance.verdict.rules import Check, load_all

    checks = dict(load_all())
    checks["loop.final-text"] = Check("loop.final-text", lambda record, facts: iter(["always wrong"]))
    dotted = start_shim(shlex.split(f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} run-result-snake"))
    scenario = find(scenarios(Features(), judged=True), lambda s: "host" not in s,
                    settings=settings(max_examples=50, derandomize=True, database=None, phases=[Phase.generate]))
    judged = Judge(reference_shim, dotted, shared_provider, checks=checks).findings(scenario)
    assert {f.rule for f in judged.against} == {"loop.final-text"}, judged
    assert "loop.final-text" not in {f.rule for f in judged.port} and "keys.run-result" in {f.rule for f in judged.port}
