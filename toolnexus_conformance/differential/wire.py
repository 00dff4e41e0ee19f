"""What the differential generator varies on the provider's side of a generated scenario:
each turn's ``wire`` block (fake_provider/wire.py — SSE chunk boundaries anywhere, including
inside UTF-8 sequences and JSON values, at offsets or every few bytes; OpenAI tool-call delta
indexes with gaps, out of index order or without ``index``; usage absent or without a usable
total; assistant content null, "" or absent), each turn's ``extra`` block (what a real
provider adds: OpenAI message keys, Anthropic thinking blocks, response keys, unknown SSE
events) and calls of a tool the toolkit does not declare. Every choice takes
the default first (differential/choices.py), so hypothesis shrinks a variation away when it is not the cause.

:func:`variation_rules` names the rules a generated scenario must cite so that the golden
comparison reports the unpinned differences these variations provoke (advisory rows that
apply only when cited) instead of calling them failures.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

from toolnexus_conformance.differential.choices import Region
from toolnexus_conformance.helpers.json_copy import copy_json

UNDECLARED_NAME = "ghost_tool"
# argument values with multi-byte UTF-8, so a split inside one is possible
NON_ASCII_VALUES = ("Zürich", "東京 ☕", "🚀")
_USAGE = {"openai": ["full", "absent", "no-total", "zero-total"], "anthropic": ["full", "absent"]}
_CONTENT = [None, "null", "empty", "absent"]
_ORDER = ["sequential", "reversed", "interleaved"]
_MESSAGE_KEYS = [{"refusal": None}, {"refusal": None, "annotations": []}]


@functools.cache
def _wire_choices(calls: int, style: str) -> tuple[tuple[Any, ...], ...]:
    """A turn's independent wire choices as one pick: every combination as likely, all
    defaults first (so it shrinks to the plain turn)."""
    dimensions: list[list[Any]] = [[False, True], _USAGE["openai" if style == "openai" else "anthropic"]]
    if style == "openai":
        dimensions.append(_CONTENT)
        if calls > 1:
            dimensions += [_ORDER, [False, True]]
        elif calls == 1:
            dimensions.append([False, True])
    return tuple(itertools.product(*dimensions))


# A split's two yes/no choices as one pick: "every" one time in three, "utf8" one in two.
_SPLIT_KIND = tuple(itertools.product([False, False, True], [False, True]))


def turn_wire(choices: Region, calls: int, style: str) -> dict[str, Any]:
    """A ``wire`` block for a turn with ``calls`` tool calls ({} = served as usual)."""
    split_it, usage, *openai_only = choices.pick(_wire_choices(calls, style))
    wire: dict[str, Any] = {}
    if split_it:
        # 1 to 4 offsets, each count as likely; a repeated offset is one cut, as in wire.py
        at = [choices.integer(1, 700) for _ in range(choices.integer(1, 4))]
        split: dict[str, Any] = {"at": list(dict.fromkeys(at)), "pauseMs": 0}
        every, utf8 = choices.pick(_SPLIT_KIND)
        if every:
            split["every"] = choices.pick((16, 61))
        if utf8:
            split["utf8"] = True
        wire["split"] = split
    if usage != "full":
        wire["usage"] = usage
    if style != "openai":
        return wire
    content, *by_calls = openai_only
    if content is not None:
        wire["content"] = content
    if calls > 1:
        order, gaps = by_calls
        if order != "sequential":
            wire["toolCallOrder"] = order
        if gaps:  # ascending, so index order stays call order: only gaps
            wire["toolCallIndexes"] = sorted(choices.subset(range(10), calls, calls))
    elif calls == 1 and by_calls[0]:  # omit the index
        wire["omitToolCallIndex"] = True
    return wire


# What a turn's extra block adds, as one pick: something one time in three; then the
# style's message keys (OpenAI: none, or one of two sets) or thinking block (Anthropic),
# response keys and an unknown event, each one time in two.
_EXTRA_CHOICES: dict[str, tuple[tuple[Any, ...], ...]] = {
    "openai": tuple(itertools.product([False, False, True], [None, None, *_MESSAGE_KEYS], [False, True], [False, True])),
    "anthropic": tuple(itertools.product([False, False, True], [False, True], [False, True], [False, True])),
}


def turn_extra(choices: Region, style: str) -> dict[str, Any]:
    """An ``extra`` block ({} = nothing added); values as real providers send them."""
    anything, styled, response_keys, events = choices.pick(_EXTRA_CHOICES["openai" if style == "openai" else "anthropic"])
    extra: dict[str, Any] = {}
    if not anything:
        return extra
    if style == "openai" and styled is not None:
        extra["extraMessageKeys"] = copy_json(styled)  # the table's lists stay the table's
    if style == "anthropic" and styled:
        extra["extraBlocks"] = [{"type": "thinking", "thinking": "The tools answer this. ☕", "signature": "sig-generated"}]
    if response_keys:
        extra["extraResponseKeys"] = {"system_fingerprint": "fp_generated"}
    if events:
        extra["extraEvents"] = [{"type": "message_metadata", "choices": []} if style == "openai" else {"type": "ping"}]
    return extra


def with_undeclared(choices: Region, names: list[str]) -> list[str]:
    """``names``, sometimes (one time in four) with a call of a tool nobody declared put
    somewhere in it."""
    if not choices.chance(1, 4):
        return names
    at = choices.integer(0, len(names))
    return [*names[:at], UNDECLARED_NAME, *names[at:]]


def variation_rules(turns: list[dict[str, Any]]) -> list[str]:
    """The rules a scenario with these turns cites for its provider-side variations."""
    rules: list[str] = []
    wires = [t.get("wire") or {} for t in turns]
    if any(c["name"] == UNDECLARED_NAME for t in turns for c in t.get("toolCalls", [])):
        rules.append("loop.undeclared-tool-call")
    if any(w.get("toolCallOrder") == "reversed" for w in wires):
        rules.append("loop.sse-openai-delta-order")
    if any(w.get("usage") in {"no-total", "zero-total"} for w in wires):
        rules.append("loop.usage-total-missing")
    if any("content" in w for w in wires):
        rules.append("loop.assistant-content-null")
    if any(t.get("extra") for t in turns):
        rules.append("loop.assistant-extra-keys")
    return rules
