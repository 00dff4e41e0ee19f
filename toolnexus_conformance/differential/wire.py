"""What the differential generator varies on the provider's side of a generated scenario:
each turn's ``wire`` block (fake_provider/wire.py — SSE chunk boundaries anywhere, including
inside UTF-8 sequences and JSON values, at offsets or every few bytes; OpenAI tool-call delta
indexes with gaps, out of index order or without ``index``; usage absent or without a usable
total; assistant content null, "" or absent), each turn's ``extra`` block (what a real
provider adds: OpenAI message keys, Anthropic thinking blocks, response keys, unknown SSE
events) and calls of a tool the toolkit does not declare. Every strategy draws
the default first, so hypothesis shrinks a variation away when it is not the cause.

:func:`variation_rules` names the rules a generated scenario must cite so that the golden
comparison reports the unpinned differences these variations provoke (advisory rows that
apply only when cited) instead of calling them failures.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

from hypothesis import strategies as st

UNDECLARED_NAME = "ghost_tool"
# argument values with multi-byte UTF-8, so a split inside one is possible
NON_ASCII_VALUES = ("Zürich", "東京 ☕", "🚀")
# Strategies built once: hypothesis validates a strategy object on its first draw, so one
# built per draw costs more than the draw itself. Each draws what a fresh one would.
# st.booleans() hands out one cached object, but looking it up costs ~20 us a call.
BOOLEANS = st.booleans()
ONE_IN_THREE = st.sampled_from([False, False, True])
_ONE_IN_FOUR = st.sampled_from([False, False, False, True])
# Where a split cuts: 1 to 4 offsets, each count as likely, then each offset (a list strategy
# drew ~12 times for the same, to decide when to stop and to keep the offsets distinct; a
# repeated offset is one cut, as in wire.py).
_SPLIT_COUNT = st.sampled_from([1, 2, 3, 4])
_SPLIT_AT = {count: st.tuples(*[st.integers(1, 700)] * count) for count in (1, 2, 3, 4)}
_SPLIT_EVERY = st.sampled_from([16, 61])
# A split's two yes/no choices as one draw: "every" one time in three, "utf8" one in two.
_SPLIT_KIND = st.sampled_from(list(itertools.product([False, False, True], [False, True])))
_USAGE = {"openai": ["full", "absent", "no-total", "zero-total"], "anthropic": ["full", "absent"]}
_CONTENT = [None, "null", "empty", "absent"]
_ORDER = ["sequential", "reversed", "interleaved"]
_MESSAGE_KEYS = [{"refusal": None}, {"refusal": None, "annotations": []}]


@functools.cache
def _wire_choices(calls: int, style: str) -> st.SearchStrategy[tuple[Any, ...]]:
    """A turn's independent wire choices drawn at once: one draw from their product, each
    combination as likely as drawing them one by one made it, all defaults first (so it
    shrinks to the plain turn). One draw of a scenario's ~66 costs ~40 us whatever it
    draws, and these were a fifth of them."""
    dimensions: list[list[Any]] = [[False, True], _USAGE["openai" if style == "openai" else "anthropic"]]
    if style == "openai":
        dimensions.append(_CONTENT)
        if calls > 1:
            dimensions += [_ORDER, [False, True]]
        elif calls == 1:
            dimensions.append([False, True])
    return st.sampled_from(list(itertools.product(*dimensions)))


@functools.cache  # one strategy object per (calls, style): validated once, not per turn
@st.composite
def turn_wire(draw: st.DrawFn, calls: int, style: str) -> dict[str, Any]:
    """A ``wire`` block for a turn with ``calls`` tool calls ({} = served as usual)."""
    split_it, usage, *openai_only = draw(_wire_choices(calls, style))
    wire: dict[str, Any] = {}
    if split_it:
        split: dict[str, Any] = {"at": list(dict.fromkeys(draw(_SPLIT_AT[draw(_SPLIT_COUNT)]))), "pauseMs": 0}
        every, utf8 = draw(_SPLIT_KIND)
        if every:
            split["every"] = draw(_SPLIT_EVERY)
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
            wire["toolCallIndexes"] = sorted(draw(_indexes(calls)))
    elif calls == 1 and by_calls[0]:  # omit the index
        wire["omitToolCallIndex"] = True
    return wire


@functools.cache
def _indexes(calls: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, 9), min_size=calls, max_size=calls, unique=True)


# What a turn's extra block adds, drawn at once as turn_wire's choices are: something one
# time in three; then the style's message keys (OpenAI: none, or one of two sets) or thinking
# block (Anthropic), response keys and an unknown event, each one time in two.
_EXTRA_CHOICES: dict[str, st.SearchStrategy[tuple[Any, ...]]] = {
    "openai": st.sampled_from(list(itertools.product([False, False, True], [None, None, *_MESSAGE_KEYS], [False, True], [False, True]))),
    "anthropic": st.sampled_from(list(itertools.product([False, False, True], [False, True], [False, True], [False, True]))),
}


@functools.cache
@st.composite
def turn_extra(draw: st.DrawFn, style: str) -> dict[str, Any]:
    """An ``extra`` block ({} = nothing added); values as real providers send them."""
    anything, styled, response_keys, events = draw(_EXTRA_CHOICES["openai" if style == "openai" else "anthropic"])
    extra: dict[str, Any] = {}
    if not anything:
        return extra
    if style == "openai" and styled is not None:
        extra["extraMessageKeys"] = styled
    if style == "anthropic" and styled:
        extra["extraBlocks"] = [{"type": "thinking", "thinking": "The tools answer this. ☕", "signature": "sig-generated"}]
    if response_keys:
        extra["extraResponseKeys"] = {"system_fingerprint": "fp_generated"}
    if events:
        extra["extraEvents"] = [{"type": "message_metadata", "choices": []} if style == "openai" else {"type": "ping"}]
    return extra


def with_undeclared(draw: st.DrawFn, names: list[str]) -> list[str]:
    """``names``, sometimes with a call of a tool nobody declared put somewhere in it."""
    if not draw(_ONE_IN_FOUR):
        return names
    at = draw(_position(len(names)))
    return [*names[:at], UNDECLARED_NAME, *names[at:]]


@functools.cache
def _position(count: int) -> st.SearchStrategy[int]:
    return st.integers(0, count)


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
