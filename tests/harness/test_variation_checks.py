"""The checks of toolnexus_conformance/verdict/rules/variations.py (and the usage check they refine) fed recorded
runs by hand: the reference's behaviour passes, a deliberately broken one is named in a
readable message. Advisory rules never fail a run, so no mutant can prove these checks;
this does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.run.facts import facts_for
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord
from toolnexus_conformance.scenario.model import Scenario, Variant
from toolnexus_conformance.verdict.rules import NotApplicable, load_all

CHECKS = load_all()
TIME = {"name": "get_time", "description": "t", "behaviour": {"reply": "09:30"}}


def record(turns: list[dict[str, Any]], phases: list[PhaseRecord], style: str = "openai", entry: str = "run",
           **extra: Any) -> RunRecord:
    data = {"id": "x", "title": "x", "rules": ["loop.final-text"], "styles": [style], "entries": [entry],
            "toolkit": {"tools": [TIME]}, "prompt": "p", "turns": turns, **extra}
    variant = Variant(Scenario(Path("x.json"), data, "0"), style, entry, uncalled_relay=False)
    return RunRecord(variant, facts_for(variant), phases)


def phase(entry: str = "run", requests: int = 1, **fields: Any) -> PhaseRecord:
    made = PhaseRecord(entry=entry, params={})
    made.requests = fields.pop("bodies", [{"messages": []} for _ in range(requests)])
    for key, value in fields.items():
        setattr(made, key, value)
    return made


def run(rule: str, rec: RunRecord) -> list[str]:
    return CHECKS[rule].run(rec, rec.facts).violations


def usage(prompt: int, completion: int, total: int) -> dict[str, Any]:
    return {"status": "done", "text": "", "messages": [],
            "usage": {"promptTokens": prompt, "completionTokens": completion, "totalTokens": total}}


# --- usage ------------------------------------------------------------------------------------

TURNS_NO_TOTAL = [{"text": "a", "usage": {"input": 4, "output": 5}, "wire": {"usage": "zero-total"}},
                  {"text": "b", "usage": {"input": 50, "output": 50}, "wire": {"usage": "absent"}}]


def test_usage_summed_counts_an_absent_usage_as_nothing_and_leaves_the_total_to_the_gap() -> None:
    ok = record(TURNS_NO_TOTAL, [phase(requests=2, result=usage(4, 5, 0))])
    assert run("loop.usage-summed", ok) == []
    broken = record(TURNS_NO_TOTAL, [phase(requests=2, result=usage(54, 55, 9))])
    assert run("loop.usage-summed", broken) == [
        ("usage is {'promptTokens': 54, 'completionTokens': 55}, expected the per-turn sum "
         "{'promptTokens': 4, 'completionTokens': 5}")]


def test_usage_total_missing_reports_a_kept_zero() -> None:
    assert run("loop.usage-total-missing", record(TURNS_NO_TOTAL, [phase(requests=2, result=usage(4, 5, 9))])) == []
    messages = run("loop.usage-total-missing", record(TURNS_NO_TOTAL, [phase(requests=2, result=usage(4, 5, 0))]))
    assert messages == [("totalTokens is 0; the reference counts prompt + completion for the turns without a "
                         "usable total_tokens, 9")]
    with pytest.raises(NotApplicable):
        run("loop.usage-total-missing", record(TURNS_NO_TOTAL, [phase(requests=2, result=usage(4, 5, 0))], style="anthropic"))


# --- tool-call delta order ----------------------------------------------------------------------


def _replay(ids: list[str]) -> list[dict[str, Any]]:
    calls = [{"id": i, "type": "function", "function": {"name": "get_time", "arguments": "{}"}} for i in ids]
    return [{"messages": []}, {"messages": [{"role": "user", "content": "p"}, {"role": "assistant", "content": None, "tool_calls": calls},
                                            *({"role": "tool", "tool_call_id": i, "content": "x"} for i in ids)]}]


REVERSED = [{"toolCalls": [{"id": "c1", "name": "get_time", "arguments": "{}"}, {"id": "c2", "name": "get_time", "arguments": "{}"}],
             "wire": {"toolCallOrder": "reversed"}}, {"text": "done"}]


def test_delta_order_names_a_first_seen_order() -> None:
    assert run("loop.sse-openai-delta-order", record(REVERSED, [phase("stream", bodies=_replay(["c1", "c2"]))], entry="stream")) == []
    messages = run("loop.sse-openai-delta-order", record(REVERSED, [phase("stream", bodies=_replay(["c2", "c1"]))], entry="stream"))
    assert messages == [("turn 1: deltas arrived in reversed index order and the port ordered the calls ['c2', 'c1']; "
                         "the reference orders them by index, ['c1', 'c2']")]
    with pytest.raises(NotApplicable):
        run("loop.sse-openai-delta-order", record(REVERSED, [phase("run", bodies=_replay(["c2", "c1"]))]))


# --- undeclared tools ---------------------------------------------------------------------------

GHOST = [{"toolCalls": [{"id": "g1", "name": "ghost", "arguments": "{}"}]}, {"text": "done"}]


def _ghost_phase(content: str, source: str = "custom", executed: bool = False) -> PhaseRecord:
    bodies = [{"messages": []}, {"messages": [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "g1", "type": "function", "function": {"name": "ghost", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "g1", "content": content}]}]
    metrics = [{"event": "tool", "tool": "ghost", "source": source, "isError": True, "ms": 1}]
    executions = [{"tool": "ghost", "callId": "g1", "args": {}, "answered": False}] if executed else []
    return phase(bodies=bodies, metrics=metrics, executions=executions)


def test_undeclared_tool_call_wants_the_ports_wording_and_source() -> None:
    assert run("loop.undeclared-tool-call", record(GHOST, [_ghost_phase("Unknown tool: ghost")])) == []
    messages = run("loop.undeclared-tool-call", record(GHOST, [_ghost_phase("unknown tool: ghost", source="unknown", executed=True)]))
    assert messages == [
        "g1: result 'unknown tool: ghost', expected 'Unknown tool: ghost'",
        "g1: tool event {'source': 'unknown', 'isError': True, 'pending': None}, expected source 'custom', isError true, no pending",
        "g1: the shim executed something for an undeclared tool: [{'tool': 'ghost', 'callId': 'g1', 'args': {}, 'answered': False}]",
    ]
    stopped = record(GHOST, [phase(requests=1)])
    assert run("loop.undeclared-tool-call", stopped) == ["turn 1 called ['ghost'] and the run sent no further request"]


# --- maxTurns 0 and resumes of transcripts that are not halted ---------------------------------


def test_max_turns_zero_names_requests_and_outcome() -> None:
    zero = {"client": {"maxTurns": 0}}
    good = {"status": "incomplete", "limit": "maxTurns", "text": "", "messages": []}
    assert run("loop.max-turns-zero", record([{"text": "x"}], [phase(requests=0, result=good)], **zero)) == []
    messages = run("loop.max-turns-zero", record([{"text": "x"}], [phase(requests=1, result={"status": "done", "text": "x"})], **zero))
    assert messages == ["maxTurns 0: the port sent 1 request(s); the reference sends none",
                        ("maxTurns 0: the port returned {'status': 'done', 'limit': None, 'text': 'x'}; the reference returns "
                         "{'status': 'incomplete', 'limit': 'maxTurns', 'text': ''}")]


def test_not_halted_transcript_names_a_resume_that_went_ahead() -> None:
    resume = {"resume": {"answer": {"id": "$pending.id", "ok": True}, "history": [], "turns": [{"text": "y"}]}}
    halted = phase(requests=1, result={"status": "pending"})
    refused = phase("runWithAnswer", requests=0, error={"kind": "resume", "message": "no"})
    assert run("resume.not-halted-transcript", record([{"text": "x"}], [halted, refused], **resume)) == []
    went = phase("runWithAnswer", requests=1, result={"status": "done", "text": "y"})
    assert run("resume.not-halted-transcript", record([{"text": "x"}], [halted, went], **resume)) == [
        "runWithAnswer resumed a transcript that is not halted ({'status': 'done', 'text': 'y'}); the reference refuses it",
        "runWithAnswer sent 1 request(s) for a transcript that is not halted"]


# --- assistant content shapes -------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "kept", "stored", "complaint"), [
    ("absent", {}, {"content": ""}, "has content ''; the provider sent no content key"),
    ("empty", {"content": ""}, {"content": None}, "has content None; the provider sent ''"),
    ("null", {"content": None}, {}, "has content no content key; the provider sent None"),
])
def test_content_null_compares_with_what_the_provider_sent(
    shape: str, kept: dict[str, Any], stored: dict[str, Any], complaint: str
) -> None:
    turns = [{"toolCalls": [{"id": "c1", "name": "get_time", "arguments": "{}"}], "wire": {"content": shape}}, {"text": "done"}]
    calls = [{"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]

    def with_assistant(extra: dict[str, Any]) -> PhaseRecord:
        messages = [{"role": "assistant", "tool_calls": calls, **extra}, {"role": "tool", "tool_call_id": "c1", "content": "x"}]
        return phase(requests=2, result={"status": "done", "text": "done", "messages": messages})

    assert run("loop.assistant-content-null", record(turns, [with_assistant(kept)])) == []
    messages = run("loop.assistant-content-null", record(turns, [with_assistant(stored)]))
    assert messages and all(complaint in m for m in messages), messages
