"""The differential mode (toolnexus_conformance/differential/search.py): the absent-relay rule as a property over
generated relay-free scenarios, and proof that a real difference is found and shrunk.

Shims and the fake provider start once per module; every generated scenario reuses them.
Hypothesis runs derandomized so CI sees the same examples on every run.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import generated_streams
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from toolnexus_conformance.differential.backend import BACKEND
from toolnexus_conformance.differential.cli import main
from toolnexus_conformance.differential.search import (
    Features,
    as_scenario,
    canonical,
    differ,
    minimal_difference,
    scenarios,
    search_settings,
)
from toolnexus_conformance.differential.wire import UNDECLARED_NAME
from toolnexus_conformance.fake_provider import FakeProvider, Session
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.scenario.model import load_scenario
from toolnexus_conformance.shim.ports import resolve
from toolnexus_conformance.shim.session import ShimSession

# Streams drawn by one xdist worker are read by the others (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("shared_generated_streams")
MUTANT_SHIM = Path(__file__).resolve().parent / "mutants" / "mutant_shim.py"
# Relay-free and visible in the transcript: OpenAI's stored tool_call arguments lose their raw bytes.
MUTANT = "assistant-args-recompacted"
MUTANT_CMD = f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANT_SHIM))} {MUTANT}"


@pytest.fixture(scope="module")
def mutant(start_shim: Callable[[list[str]], ShimSession]) -> ShimSession:
    return start_shim(resolve(None, MUTANT_CMD, None, None).argv)


def _calls(scenario: dict[str, Any]) -> int:
    return sum(len(turn.get("toolCalls", [])) for turn in scenario["turns"])


# The CLI tests come first: the search's worker processes are forked (cheap) only while this
# process runs no other thread (differential_pool._context), and the shim sessions and fake
# provider this module's other tests keep open run threads until the module ends; with them
# open, each worker was spawned and imported hypothesis and the harness afresh (~0.5 s of CPU).
def test_the_cli_writes_the_minimal_failing_scenario_as_a_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One worker on one shim pair: what the CLI writes is the same whoever finds it (the pool's
    # workers and pairs have their own tests: test_differential_pool.py, test_differential_ahead.py),
    # and the default, one worker per core, had this test take another path on a one-core machine
    # anyway. Two workers of two pairs: a second worker, 6 more shims, ~1 s more CPU.
    status = main([f"--port-cmd={MUTANT_CMD}", "--against=reference", "--examples", "20", "--workers", "1", "--pairs", "1",
                   "--out", str(tmp_path)])
    assert status == 1, capsys.readouterr()
    written = sorted(tmp_path.glob("*.json"))
    assert len(written) == 1
    scenario = load_scenario(written[0])  # schema, file name == id, known rule ids
    assert _calls(scenario.data) <= 2
    assert "minimal scenario written to" in capsys.readouterr().out


def test_the_cli_reports_agreement_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--port=reference", "--against=reference", "--examples", "5", "--out", str(tmp_path)]) == 0
    assert not list(tmp_path.iterdir())
    assert "agree on 5 generated scenarios" in capsys.readouterr().out


@pytest.mark.rule("absent.byte-identical")
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(Features(resume=True, hooks=True)))
def test_relay_support_never_changes_a_generated_relay_free_run(
    scenario: dict[str, Any], reference_shim: ShimSession, norelay_shim: ShimSession, shared_provider: FakeProvider
) -> None:
    failures = differ(norelay_shim, reference_shim, scenario, provider=shared_provider)
    assert not failures, "relay support switched on changes a relay-free run:\n" + "\n".join(failures)


def test_generated_relay_scenarios_are_valid_and_cover_inprocess_relay() -> None:
    def inprocess_relay(scenario: dict[str, Any]) -> bool:
        as_scenario(scenario)  # raises on a schema violation
        return not scenario["relayFree"] and "host" in scenario

    # Any such scenario proves the point: the first generated one, unshrunk (shrinking it cost ~2 s).
    search = settings(max_examples=200, derandomize=True, database=None, phases=[Phase.generate])
    found = find(scenarios(Features(relay=True)), inprocess_relay, settings=search)
    relays = {tool["name"] for tool in found["toolkit"]["tools"] if tool.get("relay")}
    relay_calls = [c["id"] for turn in found["turns"] for c in turn.get("toolCalls", []) if c["name"] in relays]
    assert all(f"call:{call}" in found["host"]["waitFor"]["answers"] for call in relay_calls)


def _find(features: Features, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first generated scenario of 1000 that is ``wanted`` (unshrunk: shrinking costs
    seconds here), read from the stream the tests before drew as far (generated_streams.py)."""
    found = generated_streams.first(features, wanted, examples=1000)
    as_scenario(found)  # raises on a schema violation
    return found


ALL = Features(relay=True, resume=True, hooks=True)


def test_generated_resumes_halt_and_resume_in_a_restarted_shim(
    reference_shim: ShimSession, shared_provider: FakeProvider
) -> None:
    def resumed_with_results_after_restart(scenario: dict[str, Any]) -> bool:
        resume = scenario.get("resume", {})
        return bool(resume.get("restartShim") and resume["answer"].get("data", {}).get("results"))

    found = _find(ALL, resumed_with_results_after_restart)
    assert "resume" in found["requires"] and "waitFor" not in found.get("host", {}), "a resume needs a durable host"
    variant = next(as_scenario(found).variants())
    record = run_variant(variant, reference_shim, shared_provider, timeout=10)
    assert record.first.result is not None and record.first.result.get("pending"), "the generated run did not halt"
    assert record.resumed is not None and record.resumed.error is None, record.resumed
    assert not differ(reference_shim, reference_shim, found, provider=shared_provider)


def test_generated_hooks_and_raising_waitfor_take_effect(reference_shim: ShimSession, shared_provider: FakeProvider) -> None:
    def first_turn_calls(scenario: dict[str, Any]) -> set[str]:
        return {call["name"] for call in scenario["turns"][0].get("toolCalls", [])}

    def hook_suspends_a_called_tool(scenario: dict[str, Any]) -> bool:
        rules = scenario.get("host", {}).get("hooks", {}).get("beforeTool", [])
        refused = scenario.get("expect", {}).get("error") == "toolkit"  # no run: nothing consults a hook
        return not refused and any("suspend" in r and r["tool"] in first_turn_calls(scenario) for r in rules)

    hooked = _find(ALL, hook_suspends_a_called_tool)
    assert "hooks" in hooked["requires"]
    record = run_variant(next(as_scenario(hooked).variants()), reference_shim, shared_provider, timeout=10)
    asked = {entry["event"]["name"] for entry in record.first.host.hooks if entry["name"] == "beforeTool"}
    assert asked & first_turn_calls(hooked), f"the generated beforeTool hooks were never consulted: {record.first.host.hooks}"

    raising = _find(ALL, lambda s: s.get("host", {}).get("waitFor", {}).get("raise") is True)
    record = run_variant(next(as_scenario(raising).variants()), reference_shim, shared_provider, timeout=10)
    assert len(record.first.host.wait_for) == 1, "a raise is generated only where one call can reach waitFor"
    assert record.first.error is not None, "a raising waitFor must abort the run"
    for scenario in (hooked, raising):
        assert not differ(reference_shim, reference_shim, scenario, provider=shared_provider), "not deterministic"


def test_a_real_difference_is_found_and_shrunk_to_a_small_scenario(
    reference_shim: ShimSession, mutant: ShimSession, shared_provider: FakeProvider
) -> None:
    found = minimal_difference(reference_shim, mutant, features=Features(), examples=50, provider=shared_provider)
    assert found is not None, f"the differential did not tell the reference from mutant {MUTANT}"
    assert _calls(found) <= 2 and len(found["turns"]) <= 3, f"not shrunk: {json.dumps(found)}"
    failures = differ(reference_shim, mutant, found, provider=shared_provider)
    assert any("tool_calls[0].function.arguments" in line for line in failures), failures


# --- provider-side variations (toolnexus_conformance/differential/wire.py) ---------------------------------


def _served(scenario: dict[str, Any], shim: ShimSession, provider: FakeProvider,
            monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Session]]:
    """Run the scenario's first variant; the record and the fake-provider sessions it used."""
    sessions: list[Session] = []
    open_session = provider.session

    def recording(script: Any, style: str) -> Session:
        sessions.append(open_session(script, style))
        return sessions[-1]

    monkeypatch.setattr(provider, "session", recording)
    record = run_variant(next(as_scenario(scenario).variants()), shim, provider, timeout=10)
    monkeypatch.undo()
    return record, sessions


def _streamed_openai(wanted: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], bool]:
    return lambda s: s["styles"] == ["openai"] and s["entries"] == ["stream"] and wanted(s)


def _wires(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return [t.get("wire") or {} for t in scenario["turns"]]


def _tool_parts(reply: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in reply.wire_bytes.decode().split("\n\n"):
        data = block.removeprefix("data: ")
        if data.startswith("{"):
            for choice in json.loads(data)["choices"]:
                parts.extend(choice["delta"].get("tool_calls", []))
    return parts


@pytest.mark.rule("loop.sse-openai")
def test_generated_chunk_boundaries_cut_the_stream(
    reference_shim: ShimSession, shared_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cut_inside_characters(s: dict[str, Any]) -> bool:
        first = s["turns"][0]
        return bool(_wires(s)[0].get("split", {}).get("utf8")) and any(not c["arguments"].isascii() for c in first["toolCalls"])

    found = _find(Features(), _streamed_openai(cut_inside_characters))
    record, sessions = _served(found, reference_shim, shared_provider, monkeypatch)
    cut = [r for r in sessions[0].replies if r.events and any(not e.endswith(b"\n\n") for e in r.events)]
    assert cut, "no served stream was cut inside an event"
    assert any(0x80 <= e[0] < 0xC0 for r in cut for e in r.events if e), "no piece starts inside a UTF-8 character"
    assert record.first.error is None and not differ(reference_shim, reference_shim, found, provider=shared_provider)


@pytest.mark.rule("loop.sse-openai-delta-order")
@pytest.mark.parametrize("kind", ["reversed", "interleaved", "gaps", "no-index"])
def test_generated_tool_call_deltas_take_effect(
    kind: str, reference_shim: ShimSession, shared_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    def drawn(wire: dict[str, Any]) -> bool:
        if kind in ("reversed", "interleaved"):
            return wire.get("toolCallOrder") == kind
        if kind == "gaps":  # in index order: reversed deltas open the calls last first
            return (wire.get("toolCallIndexes", [0])[-1] >= len(wire.get("toolCallIndexes", [])) > 1
                    and wire.get("toolCallOrder") != "reversed")
        return bool(wire.get("omitToolCallIndex"))

    found = _find(Features(), _streamed_openai(lambda s: drawn(_wires(s)[0]) and "wire" in s["turns"][0]))
    _, sessions = _served(found, reference_shim, shared_provider, monkeypatch)
    parts = _tool_parts(sessions[0].replies[0])
    calls = [c["id"] for c in found["turns"][0]["toolCalls"]]
    opened = [p["id"] for p in parts if "id" in p]
    if kind == "reversed":
        assert opened == calls[::-1]
        assert "loop.sse-openai-delta-order" in found["rules"], "the gap it provokes must be cited"
    elif kind == "interleaved":
        openings = [i for i, p in enumerate(parts) if "id" in p]
        assert opened == calls and openings == list(range(len(calls))), "every opening delta comes first"
    elif kind == "gaps":
        assert [p["index"] for p in parts if "id" in p] == _wires(found)[0]["toolCallIndexes"]
    else:
        assert parts and all("index" not in p for p in parts)


@pytest.mark.rule("loop.usage-total-missing")
@pytest.mark.parametrize("shape", ["absent", "no-total", "zero-total"])
def test_generated_usage_shapes_take_effect(
    shape: str, reference_shim: ShimSession, shared_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _find(Features(), lambda s: s["styles"] == ["openai"] and s["entries"] == ["run"] and _wires(s)[0].get("usage") == shape)
    _, sessions = _served(found, reference_shim, shared_provider, monkeypatch)
    usage = json.loads(sessions[0].replies[0].body).get("usage")
    assert usage == {"absent": None, "no-total": {"prompt_tokens": 10, "completion_tokens": 5},
                     "zero-total": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 0}}[shape]


@pytest.mark.rule("loop.assistant-content-null")
@pytest.mark.parametrize("shape", ["empty", "absent"])
def test_generated_content_shapes_take_effect(
    shape: str, reference_shim: ShimSession, shared_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _find(Features(), lambda s: s["styles"] == ["openai"] and s["entries"] == ["run"] and _wires(s)[0].get("content") == shape)
    _, sessions = _served(found, reference_shim, shared_provider, monkeypatch)
    message = json.loads(sessions[0].replies[0].body)["choices"][0]["message"]
    assert ("content" in message) is (shape == "empty") and message.get("content") in ("", None)
    assert "loop.assistant-content-null" in found["rules"]


@pytest.mark.rule("loop.undeclared-tool-call")
def test_generated_undeclared_calls_get_unknown_tool(
    reference_shim: ShimSession, shared_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    def calls_ghost(s: dict[str, Any]) -> bool:
        # and no tool suspends: without waitFor, a suspension would halt the run at this turn
        plain = all({"reply", "fail"} & set(t.get("behaviour", {})) for t in s["toolkit"]["tools"])
        return plain and "waitFor" not in s.get("host", {}) and any(c["name"] == UNDECLARED_NAME for c in s["turns"][0]["toolCalls"])

    found = _find(Features(), calls_ghost)
    assert UNDECLARED_NAME not in {t["name"] for t in found["toolkit"]["tools"]}
    assert "loop.undeclared-tool-call" in found["rules"]
    record, _ = _served(found, reference_shim, shared_provider, monkeypatch)
    assert len(record.first.requests) > 1, record.first
    assert f"Unknown tool: {UNDECLARED_NAME}" in json.dumps(record.first.requests[1], ensure_ascii=False)


def test_a_raising_waitfor_is_generated_only_where_the_halting_turn_has_one_call() -> None:
    """Another call of the turn a raise aborts (its afterTool hook, its reply) would race the abort."""
    from toolnexus_conformance.differential.search import _first_suspending

    # The first 400 scenarios of the stream the searches above draw (a 1000-example search's;
    # 9 raising waitFors in them), shared with test_differential_known's store test.
    raising = [s for s in generated_streams.every(ALL, 400) if s.get("host", {}).get("waitFor", {}).get("raise")]
    assert raising, "no raising waitFor generated in 400 scenarios"
    for scenario in raising:
        tools = {t["name"]: t for t in scenario["toolkit"]["tools"]}
        first = _first_suspending(scenario["turns"], tools, scenario["host"].get("hooks", {}))
        assert first is not None and len(scenario["turns"][first[0]]["toolCalls"]) == 1, \
            f"a raise where the halting turn has other calls: {json.dumps(scenario)}"
        assert "loop.results-in-call-order" not in scenario["rules"], "a raise races a delayed tool"


def test_the_search_stream_repeats_no_scenario() -> None:
    """The generate-only backend (differential/backend.py) draws each example afresh: no
    budget is spent on a scenario tried before. Hypothesis's default backend repeats ~6% (its
    mutations re-create scenarios; benchmarks/generator_mix.py)."""
    assert search_settings(10).backend == BACKEND != "hypothesis"
    drawn = generated_streams.every(ALL, 400)  # the raising-waitFor test's 400: drawn once
    assert len({canonical(s) for s in drawn}) == len(drawn) == 400
