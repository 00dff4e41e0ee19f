"""Checks for the §8 wire facts a port's loop puts on the provider wire (SPEC.md loop.*).

Style-specific rules (``loop.*-openai``, ``loop.*-anthropic``) are not applicable on the
other style's variants. The declarations (decl.*) live in scenario/declarations.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check, only_style
from .transcript import ToolTurn, tool_turns
from .variations import total_is_unusable, turn_usage

OPENAI_KEYS = {"model", "messages", "tools", "tool_choice", "stream", "stream_options"}
ANTHROPIC_KEYS = {"model", "max_tokens", "system", "messages", "tools", "stream"}


def _bodies(record: RunRecord) -> list[tuple[PhaseRecord, int, dict[str, Any]]]:
    found = [(phase, i, body) for phase in record.phases for i, body in enumerate(phase.requests)]
    if not found:
        raise NotApplicable("no provider request was made")
    return found


def _expected_path(base_url: str, style: str) -> str:
    base = urlparse(base_url.rstrip("/")).path
    if style == "openai":
        return base + "/chat/completions"
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def _endpoint(record: RunRecord, facts: Facts, style: str) -> Iterator[str]:
    only_style(facts, style)
    for p, phase in enumerate(record.phases, start=1):
        want = _expected_path(phase.params["baseUrl"], style)
        for i, (path, headers) in enumerate(zip(phase.request_paths, phase.request_headers, strict=False), start=1):
            where = f"phase {p} request {i}"
            if path != want:
                yield f"{where} went to {path!r}; with base {phase.params['baseUrl']!r} expected {want!r}"
            if "application/json" not in headers.get("content-type", ""):
                yield f"{where}: content-type is {headers.get('content-type')!r}, expected JSON"
            if style == "openai" and not headers.get("authorization", "").startswith("Bearer "):
                yield f"{where} has no Bearer authorization header"
            if style == "anthropic":
                if "x-api-key" not in headers:
                    yield f"{where} has no x-api-key header"
                if headers.get("anthropic-version") != "2023-06-01":
                    yield f"{where}: anthropic-version header is {headers.get('anthropic-version')!r}, expected '2023-06-01'"


@check("loop.openai-endpoint")
def openai_endpoint(record: RunRecord, facts: Facts) -> Iterator[str]:
    yield from _endpoint(record, facts, "openai")


@check("loop.anthropic-endpoint")
def anthropic_endpoint(record: RunRecord, facts: Facts) -> Iterator[str]:
    yield from _endpoint(record, facts, "anthropic")


@check("loop.openai-body")
def openai_body(record: RunRecord, facts: Facts) -> Iterator[str]:
    only_style(facts, "openai")
    for _, i, body in _bodies(record):
        extra = sorted(set(body) - OPENAI_KEYS)
        if extra:
            yield f"request {i + 1} carries unexpected keys {extra}"
        if "tools" in body and body.get("tool_choice") != "auto":
            yield f"request {i + 1}: tool_choice is {body.get('tool_choice')!r} beside tools, expected 'auto'"


@check("loop.anthropic-body")
def anthropic_body(record: RunRecord, facts: Facts) -> Iterator[str]:
    only_style(facts, "anthropic")
    for _, i, body in _bodies(record):
        extra = sorted(set(body) - ANTHROPIC_KEYS)
        if extra:
            yield f"request {i + 1} carries unexpected keys {extra}"
        if body.get("max_tokens") != 4096:
            yield f"request {i + 1}: max_tokens is {body.get('max_tokens')!r}, expected 4096"


@check("loop.tools-omitted-when-empty")
def tools_omitted(record: RunRecord, facts: Facts) -> Iterator[str]:
    if facts.has_tools:
        raise NotApplicable("the toolkit is not empty")
    for _, i, body in _bodies(record):
        present = sorted({"tools", "tool_choice"} & set(body))
        if present:
            yield f"request {i + 1} carries {present} although no tool is declared"


@check("loop.stream-body")
def stream_body(record: RunRecord, facts: Facts) -> Iterator[str]:
    for phase in record.phases:
        for i, body in enumerate(phase.requests):
            if phase.entry == "stream":
                if body.get("stream") is not True:
                    yield f"streamed request {i + 1} lacks stream:true"
                if facts.style == "openai" and body.get("stream_options") != {"include_usage": True}:
                    yield f"streamed request {i + 1}: stream_options is {body.get('stream_options')!r}"
            elif body.get("stream"):
                yield f"non-streamed request {i + 1} asks for a stream"


@check("loop.user-prompt")
def user_prompt(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = record.first
    if not phase.requests:
        raise NotApplicable("no provider request")
    messages = phase.requests[0].get("messages") or []
    want = {"role": "user", "content": facts.prompt}
    if not messages or messages[-1] != want:
        yield f"the first request's last message is {messages[-1] if messages else None!r}, expected {want!r}"


@check("loop.system-prompt")
def system_prompt(record: RunRecord, facts: Facts) -> Iterator[str]:
    system = facts.system_prompt
    if not system:
        raise NotApplicable("no system prompt configured")
    for _, i, body in _bodies(record):
        messages = body.get("messages") or []
        if facts.style == "openai":
            systems = [m for m in messages if m.get("role") == "system"]
            if systems != [{"role": "system", "content": system}] or messages[0].get("role") != "system":
                yield f"request {i + 1}: expected one leading system message {system!r}, got {systems!r}"
        else:
            if body.get("system") != system:
                yield f"request {i + 1}: system is {body.get('system')!r}, expected {system!r}"
            if any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
                yield f"request {i + 1}: an Anthropic body carries a system message in messages"
    if facts.style == "anthropic":
        for p, phase in enumerate(record.phases, start=1):
            if any(isinstance(m, dict) and m.get("role") == "system" for m in (phase.result or {}).get("messages") or []):
                yield f"phase {p}: the Anthropic transcript holds a system message; the prompt belongs in the system field only"


@check("loop.model-verbatim")
def model_verbatim(record: RunRecord, facts: Facts) -> Iterator[str]:
    for _, i, body in _bodies(record):
        if body.get("model") != record.first.params["model"]:
            yield f"request {i + 1}: model is {body.get('model')!r}, expected {record.first.params['model']!r}"


def _result_turns(record: RunRecord, facts: Facts) -> list[tuple[str, ToolTurn]]:
    """Every answered tool turn in every copy of the transcript (request bodies + returned)."""
    found = []
    for p, phase in enumerate(record.phases, start=1):
        copies = [(f"phase {p} request {i}", body.get("messages")) for i, body in enumerate(phase.requests, start=1)]
        copies.append((f"phase {p} transcript", (phase.result or {}).get("messages")))
        for where, messages in copies:
            for turn in tool_turns(messages or [], facts.style):
                if turn.messages_after == 0 and not turn.results:
                    continue
                found.append((where, turn))
    if not found:
        raise NotApplicable("no tool results were recorded")
    return found


def _order_problems(turns: list[tuple[str, ToolTurn]]) -> Iterator[str]:
    for where, turn in turns:
        # a halted transcript answers a prefix of the calls (halt.transcript judges which)
        if turn.result_ids != turn.call_ids[: len(turn.result_ids)]:
            yield f"{where}: results {turn.result_ids} are not in tool-call order {turn.call_ids}"


def _tool_results(record: RunRecord, facts: Facts, style: str) -> Iterator[str]:
    only_style(facts, style)
    turns = _result_turns(record, facts)
    for p, phase in enumerate(record.phases, start=1):
        # the fake provider refuses a request whose results do not pair with its calls
        yield from (f"phase {p}: the fake provider refused a request: {v}" for v in phase.provider_violations)
    yield from _order_problems(turns)


@check("loop.tool-results-openai")
def tool_results_openai(record: RunRecord, facts: Facts) -> Iterator[str]:
    yield from _tool_results(record, facts, "openai")


@check("loop.tool-results-anthropic")
def tool_results_anthropic(record: RunRecord, facts: Facts) -> Iterator[str]:
    yield from _tool_results(record, facts, "anthropic")


@check("loop.results-in-call-order")
def results_in_call_order(record: RunRecord, facts: Facts) -> Iterator[str]:
    yield from _order_problems(_result_turns(record, facts))


@check("loop.final-text")
def final_text(record: RunRecord, facts: Facts) -> Iterator[str]:
    last = record.phases[-1]
    turns = facts.turns
    if not turns or turns[-1].get("toolCalls") or (last.result or {}).get("status") != "done":
        raise NotApplicable("the run does not end on a final answer")
    want = turns[-1].get("text", "")
    got = (last.result or {}).get("text")
    if got != want:
        yield f"RunResult.text is {got!r}, expected the final turn's text {want!r}"


@check("loop.usage-summed")
def usage_summed(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = record.first
    usage = (phase.result or {}).get("usage")
    if not isinstance(usage, dict):
        raise NotApplicable("no usage reported")
    turns = facts.first_turns[: len(phase.requests)]
    prompt = sum(turn_usage(t)[0] for t in turns)
    completion = sum(turn_usage(t)[1] for t in turns)
    want = {"promptTokens": prompt, "completionTokens": completion, "totalTokens": prompt + completion}
    if total_is_unusable(facts, turns):
        del want["totalTokens"]  # a missing or zero total_tokens: loop.usage-total-missing judges it
    got = {k: usage.get(k) for k in want}
    if got != want:
        yield f"usage is {got}, expected the per-turn sum {want}"


def _sse_assembly(record: RunRecord, facts: Facts, style: str) -> Iterator[str]:
    only_style(facts, style)
    streamed = [p for p in record.phases if p.entry == "stream"]
    if not streamed:
        raise NotApplicable("not a streaming variant")
    for phase in streamed:
        turns = facts.first_turns[: len(phase.requests)]
        if (phase.result or {}).get("status") == "done" and turns and not turns[-1].get("toolCalls"):
            # the assembled final turn as the transcript keeps it (RunResult.text is loop.final-text's)
            assembled = _last_assistant_text((phase.result or {}).get("messages") or [], style)
            if assembled is not None and assembled != turns[-1].get("text", ""):
                yield f"the streamed final turn assembled to {assembled!r}, streamed {turns[-1].get('text', '')!r}"
        for body in phase.requests[1:]:
            for turn in tool_turns(body.get("messages") or [], style):
                for call in turn.calls:
                    want = facts.calls.get(call.id)
                    if want is None:
                        continue
                    if style == "openai" and call.arguments != want.raw_arguments:
                        yield f"assembled arguments of {call.id} are {call.arguments!r}, streamed {want.raw_arguments!r}"
                    if style == "anthropic" and call.arguments != json.loads(want.raw_arguments):
                        yield f"assembled input of {call.id} is {call.arguments!r}"


def _last_assistant_text(messages: list[Any], style: str) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            if style == "anthropic" and isinstance(content, list):
                return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
            return content if isinstance(content, str) else None
    return None


@check("loop.sse-openai")
def sse_openai(record: RunRecord, facts: Facts) -> Iterator[str]:
    yield from _sse_assembly(record, facts, "openai")


@check("loop.sse-anthropic")
def sse_anthropic(record: RunRecord, facts: Facts) -> Iterator[str]:
    yield from _sse_assembly(record, facts, "anthropic")


@check("loop.anthropic-system-empty")
def anthropic_system_empty(record: RunRecord, facts: Facts) -> Iterator[str]:
    only_style(facts, "anthropic")
    if facts.system_prompt:
        raise NotApplicable("a system prompt is configured")
    for _, i, body in _bodies(record):
        if "system" in body:
            yield f"request {i + 1} sends system {body['system']!r}; the reference omits it"


@check("loop.max-turns-exhaustion")
def max_turns(record: RunRecord, facts: Facts) -> Iterator[str]:
    max_turns_ = facts.max_turns
    turns = facts.first_turns
    if not max_turns_ or len(turns) <= max_turns_ or not turns[max_turns_ - 1].get("toolCalls"):
        raise NotApplicable("maxTurns is not exhausted")
    phase = record.first
    if len(phase.requests) > max_turns_:
        yield f"{len(phase.requests)} requests were sent, more than maxTurns={max_turns_}"
    got = phase.result or {}
    if got.get("status") == "pending":
        return
    name = facts.variant_name.removesuffix("-uncalled-relay")
    golden = facts.goldens.of(name)
    if golden is None:
        raise NotApplicable(f"no golden for {name} to hold the reference's answer")
    want = golden["observables"]["phases"][0].get("result") or {}
    for key in ("status", "limit", "text"):
        if got.get(key) != want.get(key):
            yield f"on exhaustion {key} is {got.get(key, '<absent>')!r}; the reference gives {want.get(key, '<absent>')!r}"


