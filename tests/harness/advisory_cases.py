"""The both-ways cases of the advisory rows of fixtures/normalization.json: for each row, a
golden, a port whose difference the row forgives, and ports with a neighbouring real
difference that must still fail. ``tests/harness/test_golden_compare.py`` runs them; a case's
key is ``rule:when:style:fields``, with ``@path`` (and ``[key=regex]`` for the items
condition) when several rows share that much."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


def max_turns(status: str, limit: str | None, text: str, messages: list[Any], only: str = "") -> dict[str, Any]:
    """A run's RunResult and done event; ``only`` ("result" or "events") gives the other one
    the golden's own outcome (done, "last words"), so a case reaches one row."""
    result = {"status": status, "text": text, "messages": messages, **({"limit": limit} if limit else {})}
    golden = {"status": "done", "text": "last words", "messages": copy.deepcopy(messages)}
    in_result = golden if only == "events" else result
    in_event = golden if only == "result" else copy.deepcopy(result)
    return {"phases": [{"result": in_result, "events": [{"type": "done", "result": in_event}]}]}


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
    Case("loop.max-turns-exhaustion:any::status,limit,text@phases.*.result", "openai",
         lambda: max_turns("done", None, "last words", MSGS),
         lambda: max_turns("incomplete", "maxTurns", "", MSGS, only="result"),
         (lambda: max_turns("done", None, "last words", [{"role": "user", "content": "bye"}]),),
         frozenset({"loop.max-turns-exhaustion"})),
    Case("loop.max-turns-exhaustion:any::status,limit,text@phases.*.events.*.result", "openai",
         lambda: max_turns("done", None, "last words", MSGS),
         lambda: max_turns("incomplete", "maxTurns", "", MSGS, only="events"),
         (lambda: max_turns("done", None, "last words", [{"role": "user", "content": "bye"}], only="events"),),
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




# --- h6's provider and host variations ------------------------------------------------------

def call(cid: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


CALL_A, CALL_B = call("call_a", "get_time", '{"zone": "UTC"}'), call("call_b", "search")


def transcript(tools: list[tuple[str, str]], calls: tuple[dict[str, Any], ...] = (CALL_A, CALL_B),
               after: tuple[dict[str, Any], ...] = ()) -> list[dict[str, Any]]:
    """An OpenAI transcript: the prompt, one turn with ``calls``, the tool messages in the
    order ``tools`` gives, the final answer, then ``after``."""
    return [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": list(calls)},
            *({"role": "tool", "tool_call_id": cid, "content": out} for cid, out in tools),
            {"role": "assistant", "content": "done"}, *after]


TOOLS_AB, TOOLS_BA = [("call_a", "09:30"), ("call_b", "none")], [("call_b", "none"), ("call_a", "09:30")]


def holding(path: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A tree whose only transcript sits at ``path`` (one of the four holders of messages)."""
    if path == "requests":
        return {"phases": [{"requests": [{"model": "m", "messages": messages}]}]}
    if path == "result":
        return {"phases": [{"result": {"status": "done", "messages": messages}}]}
    if path == "events":
        return {"phases": [{"events": [{"type": "done", "result": {"status": "done", "messages": messages}}]}]}
    return {"phases": [{"saves": [{"id": "conv", "messages": messages}]}]}


def tool_event(kind: str, cid: str, **more: Any) -> dict[str, Any]:
    return {"type": kind, "id": cid, "name": cid, **more}


def events(*order: str, changed: str = "") -> dict[str, Any]:
    """A stream's events, each written call:kind (c for tool_call, r for tool_result)."""
    out = []
    for item in order:
        cid, kind = item.split(":")
        extra = {"args": {"v": cid + changed}} if kind == "c" else {"output": cid, "isError": False}
        out.append(tool_event("tool_call" if kind == "c" else "tool_result", cid, **extra))
    return {"phases": [{"events": [*out, {"type": "done", "result": {"status": "done"}}]}]}


def usage_event(prompt: int, total: int) -> dict[str, Any]:
    usage = {"promptTokens": prompt, "completionTokens": 2, "totalTokens": total}
    return {"phases": [{"events": [{"type": "usage", "usage": usage}]}]}


REQUEST = {"model": "conformance-model", "messages": [{"role": "user", "content": "q"}]}
HTTP = {"path": "/v1/chat/completions", "headers": {"content-type": "application/json"}}
ANSWER = {"role": "assistant", "content": "Served anyway."}
PROMPT = {"role": "user", "content": "q"}


def zero(**phase: Any) -> dict[str, Any]:
    """One maxTurns-0 phase: the reference's answer unless ``phase`` replaces a key."""
    outcome = {"status": "incomplete", "limit": "maxTurns", "text": "", "messages": [PROMPT]}
    base: dict[str, Any] = {"requests": [], "http": [], "result": outcome,
                            "events": [{"type": "done", "result": copy.deepcopy(outcome)}],
                            "saves": [{"id": "conv", "messages": [PROMPT]}]}
    return {"phases": [base | phase]}


def went_on(outcome: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"status": "done", "text": "Served anyway.", "messages": [PROMPT, ANSWER]} | outcome | more


def not_halted(**resumed_phase: Any) -> dict[str, Any]:
    """A halted first phase and a resume the reference refuses, unless ``resumed_phase``
    replaces keys of the second phase (None removes one)."""
    first = {"entry": "run", "requests": [REQUEST], "http": [HTTP], "result": {"status": "pending"}}
    second: dict[str, Any] = {"entry": "runWithAnswer", "error": {"kind": "resume"}, "requests": [], "http": [],
                              "saves": [], "gets": ["conv"]}
    second.update(resumed_phase)
    return {"phases": [first, {k: v for k, v in second.items() if v is not None}]}


RESUMED = {"status": "done", "text": "It is 12 C.", "messages": [PROMPT, ANSWER]}
SAVE = {"id": "conv", "messages": [PROMPT, ANSWER]}
DELTA = frozenset({"loop.sse-openai-delta-order"})

def delta_messages_case(path: str, where: str) -> Case:
    """The tool messages of one turn in another order, in the transcript held at ``path``."""
    golden = transcript(TOOLS_AB)
    past_the_answer = [*transcript(TOOLS_AB[:1]), {"role": "tool", "tool_call_id": "call_b", "content": "none"}]
    before_the_turn = [golden[0], golden[2], golden[3], golden[1], golden[4]]
    return Case(f"loop.sse-openai-delta-order:reordered:openai:messages@{path}", "openai",
                lambda: holding(where, transcript(TOOLS_AB)),
                lambda: holding(where, transcript(TOOLS_BA)),
                (lambda: holding(where, transcript([("call_b", "none"), ("call_a", "09:31")])),
                 lambda: holding(where, copy.deepcopy(past_the_answer)),
                 lambda: holding(where, copy.deepcopy(before_the_turn))),
                DELTA)


VARIATION_CASES = [
    Case("loop.assistant-content-null:absent-or-empty:openai:content", "openai",
         lambda: body(role="assistant", tool_calls=[]),
         lambda: body(role="assistant", content="", tool_calls=[]),
         (lambda: body(role="assistant", content="text", tool_calls=[]),  # text is not "no text"
          lambda: body(role="user", content=""))),
    Case("loop.assistant-content-null:absent-or-null:openai:content", "openai",
         lambda: body(role="assistant", tool_calls=[]),
         lambda: body(role="assistant", content=None, tool_calls=[]),
         (lambda: body(role="assistant", content="text", tool_calls=[]),
          lambda: body(role="assistant", content=None, tool_calls=[CALL_A]),  # the calls still compared
          lambda: body(role="user", content=None))),
    Case("loop.sse-openai-delta-order:reordered:openai:tool_calls", "openai",
         lambda: body(role="assistant", content=None, tool_calls=[CALL_A, CALL_B]),
         lambda: body(role="assistant", content=None, tool_calls=[CALL_B, CALL_A]),
         (lambda: body(role="assistant", content=None, tool_calls=[CALL_B, call("call_a", "get_time", "{}")]),
          lambda: body(role="assistant", content=None, tool_calls=[CALL_B]),
          lambda: body(role="assistant", content=None, tool_calls=[CALL_B, CALL_A, CALL_A]))),
    *(delta_messages_case(path, where) for path, where in [
        ("phases.*.requests.*", "requests"), ("phases.*.result", "result"),
        ("phases.*.events.*.result", "events"), ("phases.*.saves.*", "saves")]),
    Case("loop.sse-openai-delta-order:reordered:openai:events@phases.*[type=^tool_call$]", "openai",
         lambda: events("a:c", "b:c", "a:r", "b:r"),
         lambda: events("b:c", "a:c", "a:r", "b:r"),
         (lambda: events("a:r", "b:c", "a:c", "b:r"),  # a result before the calls
          lambda: events("b:c", "a:c", "a:r", "b:r", changed="!"))),
    Case("loop.sse-openai-delta-order:reordered:openai:events@phases.*[type=^tool_result$]", "openai",
         lambda: events("a:c", "b:c", "a:r", "b:r"),
         lambda: events("a:c", "b:c", "b:r", "a:r"),
         (lambda: events("a:c", "a:r", "b:c", "b:r"),  # a call after a result
          lambda: events("a:c", "b:c", "b:r", "a:r", "a:r"))),
    Case("loop.usage-total-missing:any:openai:totalTokens", "openai",
         lambda: usage_event(5, 9), lambda: usage_event(5, 0),
         (lambda: usage_event(6, 9),)),
    Case("loop.max-turns-zero:extra-items::requests", "openai",
         lambda: zero(), lambda: zero(requests=[REQUEST]),
         (lambda: zero(requests=[{"messages": []}]),)),  # not a provider request
    Case("loop.max-turns-zero:extra-items::http", "openai",
         lambda: zero(), lambda: zero(http=[HTTP]),
         (lambda: zero(http=[{**HTTP, "path": "/v1/embeddings"}]),)),
    Case("loop.max-turns-zero:any::status,limit,text@phases.*.result", "openai",
         lambda: zero(), lambda: zero(result=went_on({}, messages=[PROMPT])),
         (lambda: zero(result=went_on({}, messages=[{"role": "user", "content": "other"}])),
          lambda: zero(result=None))),
    Case("loop.max-turns-zero:any::status,limit,text@phases.*.events.*.result", "openai",
         lambda: zero(), lambda: zero(events=[{"type": "done", "result": went_on({}, messages=[PROMPT])}]),
         (lambda: zero(events=[{"type": "done"}]),
          lambda: zero(events=[{"type": "done", "result": went_on({}, messages=[])}]))),
    Case("loop.max-turns-zero:extra-items::messages@phases.*.result", "openai",
         lambda: zero(), lambda: zero(result={**zero()["phases"][0]["result"], "messages": [PROMPT, ANSWER]}),
         (lambda: zero(result={**zero()["phases"][0]["result"], "messages": [ANSWER]}),  # the prompt dropped
          lambda: zero(result={**zero()["phases"][0]["result"], "messages": [PROMPT, {"role": "tool", "content": "x"}]}))),
    Case("loop.max-turns-zero:extra-items::messages@phases.*.events.*.result", "openai",
         lambda: zero(),
         lambda: zero(events=[{"type": "done", "result": {**zero()["phases"][0]["result"], "messages": [PROMPT, ANSWER]}}]),
         (lambda: zero(events=[{"type": "done", "result": {**zero()["phases"][0]["result"], "messages": [ANSWER]}}]),)),
    Case("loop.max-turns-zero:extra-items::messages@phases.*.saves.*", "openai",
         lambda: zero(), lambda: zero(saves=[{"id": "conv", "messages": [PROMPT, ANSWER]}]),
         (lambda: zero(saves=[{"id": "conv", "messages": [ANSWER, ANSWER]}]),
          lambda: zero(saves=[{"id": "other", "messages": [PROMPT, ANSWER]}]))),
    Case("loop.max-turns-zero:extra-items::events", "openai",
         lambda: zero(),
         lambda: zero(events=[{"type": "text", "delta": "Served"}, {"type": "usage", "usage": {}},
                              *zero()["phases"][0]["events"]]),
         (lambda: zero(events=[{"type": "tool_call", "id": "c"}, *zero()["phases"][0]["events"]]),
          lambda: zero(events=[{"type": "text", "delta": "Served"}]))),  # the done event missing
    Case("resume.not-halted-transcript:dropped::error", "openai",
         lambda: not_halted(), lambda: not_halted(error=None),
         (lambda: not_halted(error={"kind": "transport"}),)),
    Case("resume.not-halted-transcript:added::result", "openai",
         lambda: not_halted(), lambda: not_halted(result=RESUMED),
         (lambda: {"phases": [{**not_halted()["phases"][0], "result": None}, not_halted()["phases"][1]]},
          lambda: not_halted(result=RESUMED, gets=[]))),  # the store read stays normative
    Case("resume.not-halted-transcript:extra-items::requests", "openai",
         lambda: not_halted(), lambda: not_halted(requests=[REQUEST]),
         (lambda: {"phases": [{**not_halted()["phases"][0], "requests": [REQUEST, REQUEST]},
                              not_halted()["phases"][1]]},)),  # only the resumed phase
    Case("resume.not-halted-transcript:extra-items::http", "openai",
         lambda: not_halted(), lambda: not_halted(http=[HTTP]),
         (lambda: not_halted(http=[{**HTTP, "path": "/v1/embeddings"}]),)),
    Case("resume.not-halted-transcript:extra-items::saves", "openai",
         lambda: not_halted(), lambda: not_halted(saves=[SAVE]),
         (lambda: not_halted(saves=[SAVE, SAVE]),)),
]

CASES = [*CASES, *VARIATION_CASES]
