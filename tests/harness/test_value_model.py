"""The value model (SPEC.md §6): a value's "no value" is an absent key; wire data inside a
value is never touched. Properties over generated values, plus the two verdicts the model
must give: a RunResult full of nulls fails no rule, a Request with a null key still fails
susp.request-keys."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolnexus_conformance.helpers.schemas import validate
from toolnexus_conformance.run.value_model import event_value, hook_event_value, metric_value, run_result_value

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
REQUEST_WITH_NULLS = {"id": "r1", "kind": "approval", "prompt": "Allow?", "url": None, "data": None, "expiresAt": None}


def _no_top_level_null(value: dict[str, Any], wire: set[str]) -> bool:
    return all(v is not None for k, v in value.items() if k not in wire)


@given(st.dictionaries(st.sampled_from(["status", "text", "limit", "model", "turns", "usage", "toolCallCount"]), JSON),
       JSON, JSON)
def test_a_run_result_keeps_its_wire_data_and_loses_its_nulls(fields: dict[str, Any], messages: Any, pending: Any) -> None:
    raw = {**fields, "messages": messages, "pending": pending}
    read = run_result_value(raw)
    assert read["messages"] is messages  # wire data: exactly as written, null included
    if pending is None:
        assert "pending" not in read
    else:
        assert read["pending"] is pending
    assert _no_top_level_null(read, {"messages"})
    assert {k for k, v in raw.items() if v is not None} <= set(read)


def test_a_nil_tool_call_list_is_empty() -> None:
    assert run_result_value({"status": "done", "text": "", "messages": [], "toolCalls": None})["toolCalls"] == []


@given(st.dictionaries(st.sampled_from(["type", "id", "name", "output", "isError", "usage", "delta"]), JSON), JSON, JSON)
def test_an_event_keeps_its_request_and_args(envelope: dict[str, Any], request: Any, args: Any) -> None:
    raw = {**envelope, "request": request, "args": args}
    read = event_value(raw)
    assert read["request"] is request and read["args"] is args
    assert _no_top_level_null(read, {"request", "args"})


def test_a_done_event_reads_its_result_as_a_value() -> None:
    raw = {"type": "done", "result": {"status": "done", "text": "ok", "messages": [], "limit": None, "pending": None}}
    assert event_value(raw) == {"type": "done", "result": {"status": "done", "text": "ok", "messages": []}}


def test_metric_and_hook_events_lose_nulls_but_not_args() -> None:
    assert metric_value({"event": "tool", "tool": "t", "pending": None}) == {"event": "tool", "tool": "t"}
    hook = {"name": "t", "args": {"x": None}, "callId": None, "result": {"output": "o", "isError": None}}
    assert hook_event_value(hook) == {"name": "t", "args": {"x": None}, "result": {"output": "o"}}


def test_a_python_run_result_with_nulls_passes_the_run_result_schema() -> None:
    """What asdict writes for a done RunResult (limit and pending None) fails no key rule."""
    raw = {"text": "ok", "messages": [], "toolCalls": [], "toolCallCount": 0, "turns": 1,
           "usage": {"promptTokens": 1, "completionTokens": 1, "totalTokens": 2}, "model": "m",
           "status": "done", "limit": None, "pending": None}
    assert list(validate("run-result", run_result_value(raw))) == []
    assert list(validate("run-result", raw)) != []  # read raw, the same object would fail


def test_a_null_request_key_still_fails_the_request_schema() -> None:
    """The model never reaches into a pending Request: its null url is the port's wire answer."""
    read = run_result_value({"status": "pending", "text": "Allow?", "messages": [], "pending": REQUEST_WITH_NULLS})
    assert read["pending"] == REQUEST_WITH_NULLS
    problems = [v.json_path for v in validate("request", read["pending"])]
    assert "$.url" in problems
