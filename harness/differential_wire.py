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
from typing import Any

from hypothesis import strategies as st

from . import hypothesis_isolation  # noqa: F401  (before any draw: see its docstring)

UNDECLARED_NAME = "ghost_tool"
# argument values with multi-byte UTF-8, so a split inside one is possible
NON_ASCII_VALUES = ("Zürich", "東京 ☕", "🚀")
# Strategies built once: hypothesis validates a strategy object on its first draw, so one
# built per draw costs more than the draw itself. Each draws what a fresh one would.
# st.booleans() hands out one cached object, but looking it up costs ~20 us a call.
BOOLEANS = st.booleans()
ONE_IN_THREE = st.sampled_from([False, False, True])
_ONE_IN_FOUR = st.sampled_from([False, False, False, True])
_SPLIT_AT = st.lists(st.integers(1, 700), min_size=1, max_size=4, unique=True)
_SPLIT_EVERY = st.sampled_from([16, 61])
_USAGE = {"openai": st.sampled_from(["full", "absent", "no-total", "zero-total"]), "anthropic": st.sampled_from(["full", "absent"])}
_CONTENT = st.sampled_from([None, "null", "empty", "absent"])
_ORDER = st.sampled_from(["sequential", "reversed", "interleaved"])
_MESSAGE_KEYS = st.sampled_from([{"refusal": None}, {"refusal": None, "annotations": []}])


@functools.cache  # one strategy object per (calls, style): validated once, not per turn
@st.composite
def turn_wire(draw: st.DrawFn, calls: int, style: str) -> dict[str, Any]:
    """A ``wire`` block for a turn with ``calls`` tool calls ({} = served as usual)."""
    wire: dict[str, Any] = {}
    if draw(BOOLEANS):
        split: dict[str, Any] = {"at": draw(_SPLIT_AT), "pauseMs": 0}
        if draw(ONE_IN_THREE):
            split["every"] = draw(_SPLIT_EVERY)
        if draw(BOOLEANS):
            split["utf8"] = True
        wire["split"] = split
    usage = draw(_USAGE["openai" if style == "openai" else "anthropic"])
    if usage != "full":
        wire["usage"] = usage
    if style != "openai":
        return wire
    content = draw(_CONTENT)
    if content is not None:
        wire["content"] = content
    if calls > 1:
        order = draw(_ORDER)
        if order != "sequential":
            wire["toolCallOrder"] = order
        if draw(BOOLEANS):  # ascending, so index order stays call order: only gaps
            wire["toolCallIndexes"] = sorted(draw(_indexes(calls)))
    elif calls == 1 and draw(BOOLEANS):
        wire["omitToolCallIndex"] = True
    return wire


@functools.cache
def _indexes(calls: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, 9), min_size=calls, max_size=calls, unique=True)


@functools.cache
@st.composite
def turn_extra(draw: st.DrawFn, style: str) -> dict[str, Any]:
    """An ``extra`` block ({} = nothing added); values as real providers send them."""
    extra: dict[str, Any] = {}
    if not draw(ONE_IN_THREE):
        return extra
    if style == "openai" and draw(BOOLEANS):
        extra["extraMessageKeys"] = draw(_MESSAGE_KEYS)
    if style == "anthropic" and draw(BOOLEANS):
        extra["extraBlocks"] = [{"type": "thinking", "thinking": "The tools answer this. ☕", "signature": "sig-generated"}]
    if draw(BOOLEANS):
        extra["extraResponseKeys"] = {"system_fingerprint": "fp_generated"}
    if draw(BOOLEANS):
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
