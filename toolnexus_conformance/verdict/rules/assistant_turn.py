"""Checks for the assistant turn a port stores and replays (SPEC.md loop.assistant-turn,
loop.assistant-extra-keys).

The expected message of each served turn is rebuilt from the scenario's script with the
fake provider's own renderers, so "the provider's message" means exactly what went over
the wire: the chat.completion message (OpenAI JSON), the assembled
``{role, content, tool_calls?}`` (OpenAI SSE) or the content block list (Anthropic). Every
copy a port keeps is checked: the transcript each phase returned and every request body
that replays earlier turns.

A scripted ``extra`` (OpenAI message keys, Anthropic blocks such as ``thinking``) is part of
the provider's message on JSON turns, and an Anthropic stream's extra blocks are part of the
assembled block list; keys an OpenAI stream puts on its first delta are not message keys,
so the assembled OpenAI message has none. Keeping extras verbatim is the reference
behaviour; dropping them is the loop.assistant-extra-keys gap. A turn's ``wire.content``
(null, "" or no key) is what the provider's JSON message carries; a stream assembles null.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from toolnexus_conformance.fake_provider import anthropic as anthropic_wire
from toolnexus_conformance.fake_provider import openai as openai_wire
from toolnexus_conformance.fake_provider.script import ScriptedExtra, ScriptedTurn
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord

from . import NotApplicable, check

OPENAI_CORE = frozenset({"role", "content", "tool_calls"})
ANTHROPIC_CORE = frozenset({"role", "content"})
CALL_CORE = frozenset({"id", "type", "function"})
BLOCK_CORE = {"text": frozenset({"type", "text"}), "tool_use": frozenset({"type", "id", "name", "input"})}


@dataclass(frozen=True)
class ServedTurn:
    index: int
    phase: int  # 0-based index of the phase whose request it answered
    script: dict[str, Any]
    streamed: bool

    def provider_message(self, style: str) -> dict[str, Any]:
        turn = ScriptedTurn.from_neutral(self.script)
        if self.streamed:
            # blocks are content an Anthropic stream assembles; delta keys are no message keys
            turn = replace(turn, extra=ScriptedExtra(blocks=turn.extra.blocks if style == "anthropic" else ()))
        if style == "anthropic":
            return {"role": "assistant", "content": anthropic_wire.content_blocks(turn)}
        if not self.streamed:
            return openai_wire.message(turn)
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.tool_calls:
            message["tool_calls"] = openai_wire.message(turn)["tool_calls"]
        return message


def served_turns(record: RunRecord, facts: Facts) -> list[ServedTurn]:
    """Scripted turns in the order the provider served them, with how each was served."""
    script = facts.turns
    served: list[ServedTurn] = []
    for p, phase in enumerate(record.phases):
        for _ in phase.requests:
            if len(served) < len(script):
                served.append(ServedTurn(len(served), p, script[len(served)], phase.entry == "stream"))
    return served


def transcript_copies(record: RunRecord) -> Iterator[tuple[str, list[Any]]]:
    for p, phase in enumerate(record.phases, start=1):
        messages = (phase.result or {}).get("messages")
        if isinstance(messages, list):
            yield f"phase {p} transcript", messages
        for i, body in enumerate(phase.requests, start=1):
            if isinstance(body, dict) and isinstance(body.get("messages"), list):
                yield f"phase {p} request {i}", body["messages"]


def _pairs(record: RunRecord, facts: Facts) -> Iterator[tuple[str, dict[str, Any], ServedTurn]]:
    served = served_turns(record, facts)
    if not served:
        raise NotApplicable("no provider turn was served")
    seen = False
    for where, messages in transcript_copies(record):
        assistants = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
        for n, (message, turn) in enumerate(zip(assistants, served, strict=False)):
            seen = True
            yield f"{where}, assistant turn {n + 1}", message, turn
    if not seen:
        raise NotApplicable("no assistant turn was returned or replayed")


@check("loop.assistant-turn")
def assistant_turn(record: RunRecord, facts: Facts) -> Iterator[str]:
    style = facts.style
    for where, got, turn in _pairs(record, facts):
        want = turn.provider_message(style)
        compare = _openai_turn if style == "openai" else _anthropic_turn
        yield from (f"{where}: {problem}" for problem in compare(got, want))


def _openai_turn(got: dict[str, Any], want: dict[str, Any]) -> Iterator[str]:
    text = want.get("content")
    if text and got.get("content") != text:
        yield f"content is {got.get('content')!r}, the provider sent {text!r}"
    if not text and got.get("content") not in (None, ""):
        yield f"content is {got.get('content')!r} although the provider sent no text"
    want_calls = want.get("tool_calls") or []
    if "tool_calls" in got and not want_calls:
        yield f"tool_calls is {got['tool_calls']!r} on a turn without calls (the key belongs only to turns with calls)"
        return
    got_calls = got.get("tool_calls") or []
    if not isinstance(got_calls, list) or len(got_calls) != len(want_calls):
        yield f"carries {len(got_calls) if isinstance(got_calls, list) else got_calls!r} call(s), the provider sent {len(want_calls)}"
        return
    for g, w in zip(got_calls, want_calls, strict=False):
        core = {k: g.get(k) for k in CALL_CORE} if isinstance(g, dict) else g
        if isinstance(core, dict) and isinstance(core.get("function"), dict):
            core["function"] = {k: core["function"].get(k) for k in ("name", "arguments")}
        if core != w:
            yield f"call {w['id']} is {core!r}, the provider sent {w!r} (arguments byte for byte)"


def _anthropic_turn(got: dict[str, Any], want: dict[str, Any]) -> Iterator[str]:
    content = got.get("content")
    if not isinstance(content, list):
        yield f"content is {content!r}, expected the provider's block list"
        return
    core = [
        {k: b.get(k) for k in sorted(BLOCK_CORE[b["type"]])}
        for b in content
        if isinstance(b, dict) and b.get("type") in BLOCK_CORE and not _empty_text(b)
    ]
    # other block types (thinking, …) and what stands in their place are
    # loop.assistant-extra-keys' business; an empty text block carries no text
    want_core = [b for b in want["content"] if b.get("type") in BLOCK_CORE and not _empty_text(b)]
    if core != want_core:
        yield f"text/tool_use blocks are {core!r}, the provider sent {want_core!r}"


def _empty_text(block: dict[str, Any]) -> bool:
    return block.get("type") == "text" and block.get("text") == ""


@check("loop.assistant-extra-keys")
def assistant_extra_keys(record: RunRecord, facts: Facts) -> Iterator[str]:
    style = facts.style
    for where, got, turn in _pairs(record, facts):
        want = turn.provider_message(style)
        if style == "openai":
            yield from _extra(where, got, want, OPENAI_CORE)
            want_calls = {c["id"]: c for c in want.get("tool_calls") or []}
            for call in got.get("tool_calls") or []:
                if isinstance(call, dict):
                    yield from _extra(f"{where}, call {call.get('id')}", call, want_calls.get(call.get("id"), {}), CALL_CORE)
        else:
            yield from _extra(where, got, {"role": "assistant", "content": []}, ANTHROPIC_CORE)
            got_blocks = [b for b in got.get("content") or [] if isinstance(b, dict)]
            yield from _extra_blocks(where, got_blocks, want["content"])
            for block in got_blocks:
                if block.get("type") in BLOCK_CORE:
                    added = sorted(set(block) - BLOCK_CORE[block["type"]])
                    if added:
                        yield f"{where}: a {block['type']} block carries keys {added} the provider did not send"


def _extra_blocks(where: str, got: list[dict[str, Any]], want: list[dict[str, Any]]) -> Iterator[str]:
    """Blocks of other types than text/tool_use, compared verbatim and in order."""
    got_other = [b for b in got if b.get("type") not in BLOCK_CORE]
    want_other = [b for b in want if b.get("type") not in BLOCK_CORE]
    if got_other == want_other:
        return
    if not got_other:
        types = [b.get("type") for b in want_other]
        yield f"{where}: dropped the provider's {types} block(s) (spec gap; the reference keeps them verbatim)"
    elif not want_other:
        yield f"{where}: carries {[b.get('type') for b in got_other]} block(s) the provider did not send"
    else:
        yield f"{where}: blocks of other types are {got_other!r}, the provider sent {want_other!r} (kept verbatim by the reference)"


def _extra(where: str, got: dict[str, Any], want: dict[str, Any], core: frozenset[str]) -> Iterator[str]:
    got_extra = {k: v for k, v in got.items() if k not in core}
    want_extra = {k: v for k, v in want.items() if k not in core}
    for key in sorted(set(got_extra) - set(want_extra)):
        yield f"{where}: carries {key}={got_extra[key]!r}, which the provider did not send"
    for key in sorted(set(want_extra) - set(got_extra)):
        yield f"{where}: dropped the provider's {key}={want_extra[key]!r} (spec gap; the reference keeps it verbatim)"
    for key in sorted(set(got_extra) & set(want_extra)):
        if got_extra[key] != want_extra[key]:
            yield f"{where}: {key} is {got_extra[key]!r}, the provider sent {want_extra[key]!r}"


@check("loop.assistant-content-null")
def assistant_content_null(record: RunRecord, facts: Facts) -> Iterator[str]:
    if facts.style != "openai":
        raise NotApplicable("openai style only")
    seen = False
    for where, got, turn in _pairs(record, facts):
        if turn.script.get("text") or not turn.script.get("toolCalls"):
            continue
        seen = True
        want = turn.provider_message("openai")
        if _content_shape(got) != _content_shape(want):
            yield (f"{where}: a tool-only assistant turn has content {_content_shape(got)}; the provider sent "
                   f"{_content_shape(want)} and the reference keeps it")
    if not seen:
        raise NotApplicable("no tool-only assistant turn was returned or replayed")


def _content_shape(message: dict[str, Any]) -> str:
    return repr(message["content"]) if "content" in message else "no content key"
