"""The comparison: readable minimal diffs, and every advisory row of the normalization table
tested both ways — it forgives exactly its difference, and a neighbouring real difference
(another field of the same object, another object, another style, an uncited scenario)
still fails. Rows compose: a forgiven field neither hides nor exposes another."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from harness.compare import compare, halted_call
from harness.normtable import Row, default_table
from harness.paths import fixtures_dir, golden_dir

RULE_IDS = {r["id"] for r in json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))["rules"]}

# --- plain diffs --------------------------------------------------------------------------


def test_equal_trees_have_no_difference() -> None:
    tree = {"phases": [{"requests": [{"model": "m"}]}]}
    result = compare(tree, tree, style="openai")
    assert not result.failures and not result.gaps


def test_a_missing_extra_or_changed_key_fails_with_its_path() -> None:
    golden = {"phases": [{"result": {"status": "pending", "pending": {"id": "r1", "expiresAt": "x"}}}]}
    port = {"phases": [{"result": {"status": "pending", "pending": {"id": "r1", "expires_at": "x"}}}]}
    rendered = compare(golden, port, style="openai").render_failures()
    assert "$.phases[0].result.pending.expiresAt: golden \"x\", port <absent>" in rendered
    assert "$.phases[0].result.pending.expires_at: golden <absent>, port \"x\"" in rendered


def test_null_instead_of_absent_is_a_failure() -> None:
    result = compare({"pending": {"id": "r"}}, {"pending": {"id": "r", "url": None}}, style="openai")
    assert [d.path for d in result.failures] == ["$.pending.url"]


def test_many_differences_are_capped_in_the_rendering() -> None:
    rendered = compare({"xs": list(range(40))}, {"xs": [x + 1 for x in range(40)]}, style="openai").render_failures()
    assert "… and 28 more" in rendered


# --- every advisory row, both ways --------------------------------------------------------

HALT_PROMPT = "Sign in to the calendar"


def resumed(style: str, content: Any, is_error: bool = False, *, extra: dict[str, Any] | None = None,
            other: Any = "12:00") -> dict[str, Any]:
    """A two-phase run halted on the non-relay call call_a1 (read_calendar) beside call_t1;
    phase 1's request carries both results."""
    if style == "openai":
        assistant = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a1", "type": "function", "function": {"name": "read_calendar", "arguments": "{}"}},
            {"id": "call_t1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]}
        halted = [assistant, {"role": "tool", "tool_call_id": "call_a1", "content": HALT_PROMPT}]
        after = [assistant, {"role": "tool", "tool_call_id": "call_a1", "content": content},
                 {"role": "tool", "tool_call_id": "call_t1", "content": other}]
    else:
        assistant = {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_a1", "name": "read_calendar", "input": {}},
            {"type": "tool_use", "id": "call_t1", "name": "get_time", "input": {}}]}
        halted = [assistant, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_a1", "content": HALT_PROMPT, "is_error": True}]}]
        after = [assistant, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_a1", "content": content, "is_error": is_error},
            {"type": "tool_result", "tool_use_id": "call_t1", "content": other, "is_error": False}]}]
    phase1 = {"requests": [{"model": "m", "messages": after}],
              "executions": [{"tool": "read_calendar", "callId": "call_a1", "args": {}, "answered": True}],
              "toolEvents": [{"event": "tool", "tool": "read_calendar", "source": "native", "isError": False}],
              "hooks": [{"hook": "beforeTool", "tool": "read_calendar", "args": {}},
                        {"hook": "afterTool", "tool": "read_calendar", "args": {},
                         "result": {"output": "09:00", "isError": False}}]}
    phase1.update(extra or {})
    pending = {"id": "auth-1", "kind": "authorization", "prompt": HALT_PROMPT}
    return {"phases": [{"result": {"status": "pending", "pending": pending, "messages": halted}}, phase1]}


def not_reexecuted(tree: dict[str, Any]) -> dict[str, Any]:
    tree = copy.deepcopy(tree)
    for key in ("executions", "toolEvents", "hooks"):
        tree["phases"][1][key] = []
    return tree


def pending_event(call_id: str, arguments: str) -> dict[str, Any]:
    return {"type": "pending", "request": {"id": "r", "kind": "tool_call", "prompt": "p", "data": {"calls": [
        {"id": call_id, "name": "lookup_weather", "input": {"city": "Oslo"}, "arguments": arguments}]}}}


def body(**message: Any) -> dict[str, Any]:
    return {"phases": [{"requests": [{"messages": [message]}]}]}


def filler(style: str, text: str) -> dict[str, Any]:
    if style == "openai":
        return body(role="tool", tool_call_id="c1", content=text)
    return body(role="user", content=[{"type": "tool_result", "tool_use_id": "c1", "content": text, "is_error": True}])


def max_turns(status: str, limit: str | None, text: str, messages: list[Any]) -> dict[str, Any]:
    result = {"status": status, "text": text, "messages": messages, **({"limit": limit} if limit else {})}
    return {"phases": [{"result": result, "events": [{"type": "done", "result": copy.deepcopy(result)}]}]}


THINKING = {"type": "thinking", "thinking": "hmm", "signature": "s"}
USE = {"type": "tool_use", "id": "c1", "name": "x", "input": {}}
MSGS = [{"role": "user", "content": "hi"}]


@dataclass(frozen=True)
class Case:
    """One advisory row: the golden, a port it forgives, ports with a neighbouring real difference."""

    key: str  # rule:when:style:fields
    style: str
    golden: Callable[[], Any]
    forgiven: Callable[[], Any]
    real: tuple[Callable[[], Any], ...]
    cited: frozenset[str] = frozenset()


CASES = [
    Case("loop.assistant-content-null:null-or-empty:openai:content", "openai",
         lambda: body(role="assistant", content=None, tool_calls=[]),
         lambda: body(role="assistant", content="", tool_calls=[]),
         (lambda: body(role="assistant", content="thinking", tool_calls=[]),  # text is not "no text"
          lambda: body(role="user", content=None),  # only assistant turns
          )),
    Case("loop.anthropic-system-empty:absent-or-empty:anthropic:system", "anthropic",
         lambda: {"phases": [{"requests": [{"model": "m"}]}]},
         lambda: {"phases": [{"requests": [{"model": "m", "system": ""}]}]},
         (lambda: {"phases": [{"requests": [{"model": "m", "system": "be brief"}]}]},
          lambda: {"phases": [{"requests": [{"model": "n", "system": ""}]}]})),
    Case("relay.arguments-anthropic-format:same-json:anthropic:arguments", "anthropic",
         lambda: {"phases": [{"pendingEvents": [pending_event("c1", '{"a":1,"b":2}')]}]},
         lambda: {"phases": [{"pendingEvents": [pending_event("c1", '{"b": 2, "a": 1}')]}]},
         (lambda: {"phases": [{"pendingEvents": [pending_event("c1", '{"a":2,"b":2}')]}]},
          lambda: {"phases": [{"pendingEvents": [pending_event("c2", '{"b": 2, "a": 1}')]}]})),
    Case("resume.missing-result-text:both-match:openai:content", "openai",
         lambda: filler("openai", "no result supplied on resume for lookup"),
         lambda: filler("openai", "no result supplied on resume for call_1"),
         (lambda: filler("openai", "42"),)),
    Case("resume.missing-result-text:both-match:anthropic:content", "anthropic",
         lambda: filler("anthropic", "no result supplied on resume for lookup"),
         lambda: filler("anthropic", "no result supplied on resume for call_1"),
         (lambda: filler("anthropic", "42"),)),
    Case("resume.non-relay-reexecutes:any:openai:content", "openai",
         lambda: resumed("openai", "09:00"),
         lambda: resumed("openai", "no result supplied on resume for call_a1"),
         (lambda: resumed("openai", "09:00", other="13:00"),  # another call's result
          lambda: resumed("openai", "09:00", extra={"requests": [{"model": "other", "messages": []}]}))),
    Case("resume.non-relay-reexecutes:any:anthropic:content,is_error", "anthropic",
         lambda: resumed("anthropic", "09:00"),
         lambda: resumed("anthropic", "no result supplied on resume for call_a1", True),
         (lambda: resumed("anthropic", "09:00", other="13:00"),)),
    Case("resume.non-relay-reexecutes:missing-items::executions", "openai",
         lambda: resumed("openai", "09:00"),
         lambda: resumed("openai", "09:00", extra={"executions": []}),
         (lambda: resumed("openai", "09:00", extra={"executions": [
             {"tool": "read_calendar", "callId": "call_a1", "args": {"x": 1}, "answered": True}]}),)),
    Case("resume.non-relay-reexecutes:missing-items::toolEvents", "openai",
         lambda: resumed("openai", "09:00"),
         lambda: resumed("openai", "09:00", extra={"toolEvents": []}),
         (lambda: resumed("openai", "09:00", extra={"toolEvents": [
             {"event": "tool", "tool": "read_calendar", "source": "native", "isError": True}]}),)),
    Case("resume.non-relay-reexecutes:missing-items::hooks", "openai",
         lambda: resumed("openai", "09:00"),
         lambda: resumed("openai", "09:00", extra={"hooks": []}),
         (lambda: resumed("openai", "09:00", extra={"hooks": [{"hook": "beforeTool", "tool": "read_calendar",
                                                                 "args": {"rewritten": True}}]}),)),
    Case("loop.max-turns-exhaustion:any::status,limit,text", "openai",
         lambda: max_turns("done", None, "last words", MSGS),
         lambda: max_turns("incomplete", "maxTurns", "", MSGS),
         (lambda: max_turns("done", None, "last words", [{"role": "user", "content": "bye"}]),),
         frozenset({"loop.max-turns-exhaustion"})),
    Case("stream.pending-on-halt:extra-items::pendingEvents", "openai",
         lambda: {"phases": [{"pendingEvents": [pending_event("c1", "{}")]}]},
         lambda: {"phases": [{"pendingEvents": [pending_event("c1", "{}"), pending_event("c2", "{}")]}]},
         (lambda: {"phases": [{"pendingEvents": [pending_event("c2", "{}")]}]},
          lambda: {"phases": [{"pendingEvents": []}]})),
    Case("loop.assistant-extra-keys:dropped:openai:refusal,annotations", "openai",
         lambda: body(role="assistant", content="hi", refusal=None, annotations=[]),
         lambda: body(role="assistant", content="hi"),
         (lambda: body(role="assistant", content="hi", refusal="no", annotations=[]),),
         frozenset({"loop.assistant-extra-keys"})),
    Case("loop.assistant-extra-keys:missing-items:anthropic:content", "anthropic",
         lambda: body(role="assistant", content=[THINKING, USE]),
         lambda: body(role="assistant", content=[USE]),
         (lambda: body(role="assistant", content=[THINKING]),  # a dropped tool_use is not forgiven
          lambda: body(role="assistant", content=[{**USE, "id": "c2"}]),
          lambda: body(role="assistant", content=[USE, THINKING, THINKING])),
         frozenset({"loop.assistant-extra-keys"})),
]


def row_key(row: Row) -> str:
    return f"{row.rule}:{row.kind}:{row.style or ''}:{','.join(row.fields)}"


def rule_of(case: Case) -> str:
    return case.key.split(":")[0]


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_the_row_forgives_its_difference_as_a_gap(case: Case) -> None:
    result = compare(case.golden(), case.forgiven(), style=case.style, cited=case.cited | {rule_of(case)})
    assert not result.failures, result.render_failures()
    assert list(result.gaps) == [rule_of(case)]


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_a_neighbouring_real_difference_still_fails(case: Case) -> None:
    for real in case.real:
        result = compare(case.golden(), real(), style=case.style, cited=case.cited | {rule_of(case)})
        assert result.failures, f"{case.key}: {json.dumps(real())[:200]} was forgiven"


def test_every_advisory_row_has_a_both_ways_case() -> None:
    keys = {row_key(r) for r in default_table().advisory}
    assert keys == {c.key for c in CASES}


STYLED = [c for c in CASES if c.key.split(":")[2]]


@pytest.mark.parametrize("case", STYLED, ids=[c.key for c in STYLED])
def test_a_style_scoped_row_does_not_reach_the_other_style(case: Case) -> None:
    other = "anthropic" if case.style == "openai" else "openai"
    result = compare(case.golden(), case.forgiven(), style=other, cited=case.cited | {rule_of(case)})
    assert rule_of(case) not in result.gaps


def test_a_cited_only_row_does_not_apply_when_its_rule_is_not_cited() -> None:
    golden, port = max_turns("done", None, "x", MSGS), max_turns("incomplete", "maxTurns", "", MSGS)
    assert compare(golden, port, style="openai").failures


# --- composition --------------------------------------------------------------------------

def test_an_extra_pending_event_and_a_format_gap_in_the_same_item_compose() -> None:
    # relay-first-auth-durable[anthropic-stream] on golang: the surfaced event's arguments
    # differ in format only, and an extra event was emitted.
    golden = {"phases": [{"pendingEvents": [pending_event("c1", '{"a":1,"b":2}')]}]}
    port = {"phases": [{"pendingEvents": [pending_event("c1", '{"b": 2, "a": 1}'), pending_event("c2", "{}")]}]}
    result = compare(golden, port, style="anthropic")
    assert not result.failures, result.render_failures()
    assert set(result.gaps) == {"stream.pending-on-halt", "relay.arguments-anthropic-format"}


def test_an_extra_pending_event_does_not_hide_a_real_difference_in_the_surfaced_one() -> None:
    golden = {"phases": [{"pendingEvents": [pending_event("c1", '{"a":1}')]}]}
    port = {"phases": [{"pendingEvents": [pending_event("c1", '{"a":2}'), pending_event("c2", "{}")]}]}
    result = compare(golden, port, style="anthropic")
    assert [d.path for d in result.failures] == ["$.phases[0].pendingEvents[0].request.data.calls[0].arguments"]
    assert "stream.pending-on-halt" in result.gaps


def test_the_resumed_phase_is_not_forgiven_wholesale() -> None:
    # relay-auth-first-durable: a port not re-executing the halted call that also drops
    # tools, changes the model and the final text must fail on those.
    golden = resumed("openai", "09:00", extra={"requests": [{"model": "m", "tools": [1], "messages": []}],
                                               "result": {"status": "done", "text": "Here"}})
    port = not_reexecuted(resumed("openai", "filled", extra={"requests": [{"model": "x", "messages": []}],
                                                              "result": {"status": "done", "text": "Other"}}))
    paths = {d.path for d in compare(golden, port, style="openai").failures}
    assert {"$.phases[1].requests[0].model", "$.phases[1].requests[0].tools", "$.phases[1].result.text"} <= paths


def test_the_halted_call_is_bound_only_for_a_resumed_non_relay_halt() -> None:
    assert halted_call(resumed("openai", "x")) == {"haltedCall": "call_a1", "haltedTool": "read_calendar"}
    one_phase = {"phases": resumed("openai", "x")["phases"][:1]}
    assert halted_call(one_phase) == {}
    relay = resumed("openai", "x")
    relay["phases"][0]["result"]["pending"]["kind"] = "tool_call"
    assert halted_call(relay) == {}


def test_a_changed_tool_result_under_max_turns_still_fails() -> None:
    tool = {"role": "tool", "tool_call_id": "c1", "content": "42"}
    golden = max_turns("done", None, "x", [*MSGS, tool])
    port = max_turns("incomplete", "maxTurns", "", [*MSGS, {**tool, "content": "41"}])
    result = compare(golden, port, style="openai", cited=frozenset({"loop.max-turns-exhaustion"}))
    assert [d.path for d in result.failures] == [
        "$.phases[0].events[0].result.messages[1].content", "$.phases[0].result.messages[1].content"]


def test_a_dropped_tool_use_and_tool_result_pair_fails_where_thinking_may_be_dropped() -> None:
    # loop-tool-loop: the anthropic subset row reaches assistant blocks other than tool_use.
    result_msg = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "x"}]}
    golden = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": [USE]}, result_msg]}]}]}
    port = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": []},
                                                     {"role": "user", "content": []}]}]}]}
    assert compare(golden, port, style="anthropic", cited=frozenset({"loop.assistant-extra-keys"})).failures


# --- the registry -------------------------------------------------------------------------

@pytest.mark.parametrize("row", default_table().rows, ids=lambda r: r.name)
def test_every_row_names_an_existing_rule_and_a_plain_field_scope(row: Row) -> None:
    assert row.rule in RULE_IDS, f"{row.name}: {row.rule!r} is not a rule of fixtures/rules.json"
    assert row.fields and all("*" not in f and "." not in f for f in row.fields), row.name
    if row.path[-1] == "**":
        assert row.where.conditions, f"{row.name}: a path ending in '**' reaches any object; 'where' must say which"


STRUCTURE = {"phases", "requests", "messages", "result", "events", "saves", "waitFor", "pendingEvents"}


@pytest.mark.parametrize("row", default_table().advisory, ids=lambda r: r.name)
def test_no_row_forgives_a_whole_phase_message_or_result(row: Row) -> None:
    assert not set(row.fields) & (STRUCTURE - {"pendingEvents"}), row.name
    if row.kind in {"extra-items", "missing-items"}:
        assert row.items.conditions, f"{row.name}: a list row says which items it may forgive"


def _values_at(node: Any, row: Row, path: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        if row.holds_at(path, node, {"haltedCall": node.get("tool_call_id") or node.get("tool_use_id") or ""}):
            for name in row.fields:
                if name in node:
                    yield node[name]
        for key, value in node.items():
            yield from _values_at(value, row, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _values_at(value, row, (*path, str(i)))


def test_an_any_row_only_ever_reaches_scalars_in_the_goldens() -> None:
    rows = [r for r in default_table().advisory if r.kind == "any"]
    goldens = sorted(golden_dir().glob("*/*.json"))
    assert goldens, "no goldens"
    for file in goldens:
        tree = json.loads(file.read_text(encoding="utf-8"))["observables"]
        for row in rows:
            for value in _values_at(tree, row):
                assert not isinstance(value, dict | list), f"{row.name} reaches a {type(value).__name__} in {file}"
