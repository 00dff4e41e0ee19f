"""What the goldens hold (SPEC §5) and the wholesale forgivenesses the scoped rows replaced,
checked on the real goldens: an ignored beforeTool rewrite, a resumed phase, an exhausted
maxTurns and a dropped tool pair must each fail."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from toolnexus_conformance.golden.compare import compare
from toolnexus_conformance.helpers.paths import fixtures_dir, golden_dir

# --- what the goldens carry (§5) ----------------------------------------------------------

def _golden(scenario: str, variant: str) -> dict[str, Any]:
    return json.loads((golden_dir() / scenario / f"{variant}.json").read_text(encoding="utf-8"))["observables"]


def test_a_port_ignoring_a_before_tool_args_rewrite_fails_absent_hooks_rewrite() -> None:
    golden = _golden("absent-hooks-rewrite", "openai-run")
    port = copy.deepcopy(golden)
    hook_args = next(h["args"] for h in port["phases"][0]["hooks"] if h["hook"] == "beforeTool")
    port["phases"][0]["executions"][0]["args"] = hook_args  # the tool ran with the provider's args
    result = compare(golden, port, style="openai", cited=frozenset({"absent.byte-identical"}))
    assert {d.path for d in result.failures} == {"$.phases[0].executions[0].args.from", "$.phases[0].executions[0].args.to"}


def test_goldens_carry_execution_args_hooks_gets_and_pinned_headers() -> None:
    phase = _golden("absent-hooks-rewrite", "anthropic-ask")["phases"][0]
    assert all("args" in e for e in phase["executions"])
    assert {h["hook"] for h in phase["hooks"]} == {"beforeTool", "afterTool"}
    assert phase["gets"] == ["conv-absent-hooks-rewrite"]
    assert phase["http"][0] == {"path": "/v1/messages", "headers": {
        "anthropic-version": "2023-06-01", "content-type": "application/json", "x-api-key": "<redacted>"}}


@pytest.mark.parametrize("field,changed", [
    ("gets", []),
    ("http", [{"path": "/v1/chat/completions", "headers": {"content-type": "application/json"}}]),
    ("hooks", []),
])
def test_a_changed_store_read_header_or_hook_call_fails(field: str, changed: Any) -> None:
    golden = _golden("absent-hooks-rewrite", "anthropic-ask")
    port = copy.deepcopy(golden)
    port["phases"][0][field] = changed
    assert compare(golden, port, style="anthropic").failures


def test_observables_keep_pinned_headers_and_drop_client_ones() -> None:
    from types import SimpleNamespace

    from toolnexus_conformance.run.host import HostLog
    from toolnexus_conformance.run.observables import observables
    from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

    phase = PhaseRecord(entry="run", params={}, requests=[{"model": "m"}],
                        request_paths=["/s/0a1b2c/v1/chat/completions"],
                        request_headers=[{"authorization": "Bearer <redacted>", "user-agent": "Go-http-client/1.1",
                                          "content-type": "application/json", "accept-encoding": "gzip"}],
                        host=HostLog(hooks=[{"name": "beforeTool", "event": {"name": "t", "args": {"a": 1},
                                                                             "callId": "c1", "turn": 1}}],
                                     gets=["conv-1"]),
                        executions=[{"tool": "t", "callId": "c1", "args": {"a": 2}, "answered": False, "extra": 1}])
    variant = SimpleNamespace(name="openai-run", scenario=SimpleNamespace(id="s"))
    out = observables(RunRecord(variant=variant, facts=None, phases=[phase]))["phases"][0]  # type: ignore[arg-type]
    assert out["http"] == [{"path": "/v1/chat/completions",
                            "headers": {"authorization": "Bearer <redacted>", "content-type": "application/json"}}]
    assert out["hooks"] == [{"hook": "beforeTool", "tool": "t", "args": {"a": 1}}]
    assert out["gets"] == ["conv-1"]
    assert out["executions"] == [{"tool": "t", "callId": "c1", "args": {"a": 2}, "answered": False}]


# --- the three wholesale forgivenesses, on the real goldens -----------------------

def _scenario_rules(scenario: str) -> frozenset[str]:
    path = fixtures_dir() / "scenarios" / f"{scenario}.json"
    return frozenset(json.loads(path.read_text(encoding="utf-8"))["rules"])


def test_real_golden_resumed_phase_dropping_tools_changing_model_and_text_fails() -> None:
    golden = _golden("relay-auth-first-durable", "openai-run")
    port = copy.deepcopy(golden)
    resumed_phase = port["phases"][1]
    for key in ("executions", "toolEvents", "hooks"):
        resumed_phase[key] = []  # golang's way: not re-executed (forgiven)
    request = resumed_phase["requests"][0]
    del request["tools"]
    request["model"] = "another-model"
    resumed_phase["result"]["text"] = "Something else."
    result = compare(golden, port, style="openai", cited=_scenario_rules("relay-auth-first-durable"))
    paths = {d.path for d in result.failures}
    assert {"$.phases[1].requests[0].tools", "$.phases[1].requests[0].model", "$.phases[1].result.text"} <= paths
    assert "resume.non-relay-reexecutes" in result.gaps


def test_real_golden_max_turns_with_a_wrong_tool_result_fails() -> None:
    golden = _golden("loop-max-turns-exhausted", "openai-run")
    port = copy.deepcopy(golden)
    port["phases"][0]["result"]["messages"][2]["content"] = "a wrong result"
    result = compare(golden, port, style="openai", cited=_scenario_rules("loop-max-turns-exhausted"))
    assert [d.path for d in result.failures] == ["$.phases[0].result.messages[2].content"]


def test_real_golden_tool_loop_with_a_dropped_tool_use_and_result_pair_fails() -> None:
    golden = _golden("loop-tool-loop", "anthropic-run")
    port = copy.deepcopy(golden)
    messages = port["phases"][0]["result"]["messages"]
    messages[3]["content"] = [b for b in messages[3]["content"] if b["type"] != "tool_use"]
    messages[4]["content"] = []
    result = compare(golden, port, style="anthropic", cited=_scenario_rules("loop-tool-loop"))
    assert any(d.path.startswith("$.phases[0].result.messages[3].content") for d in result.failures)
    assert any(d.path.startswith("$.phases[0].result.messages[4].content") for d in result.failures)


# --- h6's variation gaps, as golang answers them, on the real goldens ------------------------

def _first_seen_order(node: Any) -> None:
    """Rewrite a transcript tree as a port keeping first-seen delta order would: each
    assistant turn's calls, the tool messages answering it, and runs of tool_call /
    tool_result events, reversed."""
    if isinstance(node, dict):
        if node.get("role") == "assistant" and isinstance(node.get("tool_calls"), list):
            node["tool_calls"].reverse()
        for key, value in node.items():
            if key in ("messages", "events") and isinstance(value, list):
                node[key] = _reverse_runs(value, "role" if key == "messages" else "type")
            _first_seen_order(node[key])
    elif isinstance(node, list):
        for item in node:
            _first_seen_order(item)


def _reverse_runs(items: list[Any], key: str) -> list[Any]:
    out: list[Any] = []
    run: list[Any] = []
    for item in [*items, None]:
        kind = item.get(key) if isinstance(item, dict) else None
        if run and (kind != run[0].get(key) or kind not in ("tool", "tool_call", "tool_result")):
            out.extend(reversed(run))
            run = []
        if kind in ("tool", "tool_call", "tool_result"):
            run.append(item)
        elif item is not None:
            out.append(item)
    return out


def test_real_golden_first_seen_delta_order_is_a_gap_and_a_changed_result_still_fails() -> None:
    scenario = "loop-sse-openai-reversed-deltas"
    golden = _golden(scenario, "openai-stream")
    port = copy.deepcopy(golden)
    _first_seen_order(port)
    assert port["phases"][0]["result"] != golden["phases"][0]["result"]
    result = compare(golden, port, style="openai", cited=_scenario_rules(scenario))
    assert not result.failures, result.render_failures()
    assert set(result.gaps) == {"loop.sse-openai-delta-order"}
    port["phases"][0]["result"]["messages"][2]["content"] = "a wrong result"
    result = compare(golden, port, style="openai", cited=_scenario_rules(scenario))
    assert [d.path for d in result.failures] == ["$.phases[0].result.messages[3].content"]


def _served_anyway(golden: dict[str, Any]) -> dict[str, Any]:
    """loop-max-turns-zero as golang runs it: one request, a final answer, done."""
    port = copy.deepcopy(golden)
    phase = port["phases"][0]
    answer = {"role": "assistant", "content": "Served only to a port that reads maxTurns 0 as a default."}
    phase["requests"] = [{"model": "conformance-model", "messages": copy.deepcopy(phase["result"]["messages"])}]
    phase["http"] = [{"path": "/v1/chat/completions", "headers": {"content-type": "application/json"}}]
    outcome = {"status": "done", "text": answer["content"], "messages": [*phase["result"]["messages"], answer]}
    phase["result"] = outcome
    phase["events"] = [{"type": "text", "delta": answer["content"]},
                       {"type": "usage", "usage": {"promptTokens": 5, "completionTokens": 5, "totalTokens": 10}},
                       {"type": "done", "result": copy.deepcopy(outcome)}]
    return port


def test_real_golden_max_turns_zero_served_is_a_gap_and_a_changed_prompt_still_fails() -> None:
    scenario = "loop-max-turns-zero"
    golden = _golden(scenario, "openai-stream")
    port = _served_anyway(golden)
    result = compare(golden, port, style="openai", cited=_scenario_rules(scenario))
    assert not result.failures, result.render_failures()
    assert set(result.gaps) == {"loop.max-turns-zero"}
    port["phases"][0]["result"]["messages"][0]["content"] = "another prompt"
    result = compare(golden, port, style="openai", cited=_scenario_rules(scenario))
    assert [d.path for d in result.failures] == ["$.phases[0].result.messages[0].content"]
    assert compare(golden, _served_anyway(golden), style="openai").failures, "uncited: not forgiven"


def test_real_golden_not_halted_resume_that_continues_is_a_gap_and_the_first_phase_stays_normative() -> None:
    scenario = "resume-not-halted-completed"
    golden = _golden(scenario, "openai-ask")
    port = copy.deepcopy(golden)
    resumed_phase = port["phases"][1]
    del resumed_phase["error"]
    resumed_phase["result"] = copy.deepcopy(golden["phases"][0]["result"])
    resumed_phase["requests"] = copy.deepcopy(golden["phases"][0]["requests"][-1:])
    resumed_phase["http"] = copy.deepcopy(golden["phases"][0]["http"][-1:])
    resumed_phase["saves"] = [{"id": resumed_phase["gets"][0], "messages": []}]
    result = compare(golden, port, style="openai", cited=_scenario_rules(scenario))
    assert not result.failures, result.render_failures()
    assert set(result.gaps) == {"resume.not-halted-transcript"}
    port["phases"][0]["requests"][0]["model"] = "another-model"
    resumed_phase["gets"] = []
    result = compare(golden, port, style="openai", cited=_scenario_rules(scenario))
    assert {d.path for d in result.failures} == {"$.phases[0].requests[0].model", "$.phases[1].gets[0]"}
