"""Wire-level variations a scripted turn may ask for: how the same model turn is put on the
wire, not what it says. A scenario turn's ``wire`` object (all keys optional):

    {"split": {"every": 7, "at": [3, 40], "utf8": true, "pauseMs": 2},
     "usage": "absent" | "no-total" | "zero-total",
     "content": "null" | "empty" | "absent",
     "toolCallIndexes": [0, 2], "omitToolCallIndex": true,
     "toolCallOrder": "reversed" | "interleaved"}

- ``split`` cuts an SSE stream's bytes into pieces written (and flushed) separately, with a
  short pause between them, so a client's reads end there: every ``every`` bytes, at the
  byte offsets in ``at`` (offsets at or past the end are ignored, so a script need not know
  the stream's length), and with ``utf8`` one byte into every multi-byte UTF-8 character.
  JSON responses are not split.
- ``usage`` sends no usage at all (both styles), or an OpenAI usage without
  ``total_tokens`` or with ``total_tokens: 0`` (Anthropic has no total: ignored there).
- ``content`` is the OpenAI assistant ``content`` of a turn without text: ``null``, ``""``
  or no key (JSON defaults: ``null`` on a tool-call turn, ``""`` otherwise; the stream's
  role chunk has no content key by default). Ignored by Anthropic.
- ``toolCallIndexes`` (one per call, unique, so gaps are possible), ``omitToolCallIndex`` and
  ``toolCallOrder`` shape the OpenAI stream's ``tool_calls`` deltas (the JSON message lists
  the calls in script order, where an index has no meaning). ``reversed`` sends the last
  call's deltas first; ``interleaved`` sends every call's opening delta, then every first
  argument piece, then every second piece.

Every variation is named in ``SHAPES`` as *provider* (the official API sends it and the
official SDK parses it: ``tests/fake_provider/test_sdk_oracle.py`` proves the second half
with the ``openai`` and ``anthropic`` packages) or *gateway* (seen from OpenAI-compatible
gateways and servers, beyond the official API; the official SDKs' own stream accumulators
fail on most of them). A normative rule rests on a gateway shape only through an owner
decision of SPEC.md §1 (``tests/fake_provider/test_gateway_shapes.py``); :func:`gateway_shapes` tells the
parity report which scenario runs meet one.

This module owns parsing that object, cutting a stream into pieces and the shape table; the
renderers in ``openai.py`` and ``anthropic.py`` apply the rest."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from .script_error import ScriptError, script_object

USAGE_SHAPES = ("full", "absent", "no-total", "zero-total")
CONTENT_SHAPES = ("null", "empty", "absent")
CALL_ORDERS = ("sequential", "reversed", "interleaved")
MAX_PAUSE_MS = 50
# A split stream pauses between pieces; this bounds how long one response can take.
MAX_PIECES = 2000


PROVIDER, GATEWAY = "provider", "gateway"


@dataclass(frozen=True)
class Shape:
    """One way a scripted turn can be put on the wire, and where it comes from in each style
    that sends it (a style missing from ``origin`` does not put this shape on the wire)."""

    name: str
    origin: Mapping[str, str]
    why: str


def _shape(name: str, why: str, **origin: str) -> tuple[str, Shape]:
    return name, Shape(name, origin, why)


# Every variation a scenario's wire and extra blocks can script. The official SDKs named in
# "why" are openai 3.60 and anthropic 2.16.
SHAPES: dict[str, Shape] = dict([
    _shape("wire.split", "a stream's bytes reach a client in pieces that end anywhere (TCP); "
           "both SDKs' SSE decoders buffer lines", openai=PROVIDER, anthropic=PROVIDER),
    _shape("wire.usage=absent", "OpenAI sends usage on every completion and, when include_usage "
           "asks for it, in a stream's last chunk; an Anthropic message always has usage "
           "(anthropic's stream accumulator reads it: get_final_message() raises without it)",
           openai=GATEWAY, anthropic=GATEWAY),
    _shape("wire.usage=no-total", "OpenAI's usage always has total_tokens (CompletionUsage)", openai=GATEWAY),
    _shape("wire.usage=zero-total", "OpenAI's total_tokens is prompt + completion", openai=GATEWAY),
    _shape("wire.content=null", "OpenAI's message of a tool-call turn has content null", openai=PROVIDER),
    _shape("wire.content=empty", "an OpenAI stream's first delta carries content \"\" "
           "(ChatCompletionMessage.content is Optional[str])", openai=PROVIDER),
    _shape("wire.content=absent", "OpenAI's message always has a content key (null when there is "
           "no text): required in the published response schema", openai=GATEWAY),
    _shape("wire.toolCallIndexes=gaps", "OpenAI numbers a stream's tool calls 0, 1, 2...; "
           "openai's ChatCompletionStreamState raises IndexError on a gap", openai=GATEWAY),
    _shape("wire.omitToolCallIndex", "OpenAI's tool-call deltas always carry index "
           "(ChoiceDeltaToolCall.index is required); ChatCompletionStreamState raises TypeError "
           "without it", openai=GATEWAY),
    _shape("wire.toolCallOrder=reversed", "OpenAI streams calls in index order; "
           "ChatCompletionStreamState raises IndexError on a later index first", openai=GATEWAY),
    _shape("wire.toolCallOrder=interleaved", "OpenAI streams one call's deltas after the other's "
           "(the SDK assembles an interleaved stream by index, but the API does not send one)",
           openai=GATEWAY),
    _shape("extra.extraMessageKeys", "keys OpenAI adds to a message (refusal, annotations); "
           "the SDK keeps them", openai=PROVIDER),
    _shape("extra.extraBlocks", "blocks the Messages API adds before text and tool_use "
           "(thinking, redacted_thinking); streamed as the API streams them", anthropic=PROVIDER),
    _shape("extra.extraResponseKeys", "keys both APIs add to a response (system_fingerprint, "
           "service_tier); the SDKs keep them", openai=PROVIDER, anthropic=PROVIDER),
    _shape("extra.extraEvents", "OpenAI: chunks beyond chat.completion.chunk are Azure "
           "OpenAI's content-filter events (the SDK's stream helper skips them by their "
           "object); Anthropic: the Messages API's versioning policy says new event types may "
           "appear, and the SDK passes them by", openai=GATEWAY, anthropic=PROVIDER),
])


def turn_shapes(turn: Mapping[str, Any]) -> list[str]:
    """The names in SHAPES of the variations a neutral scripted turn uses (``wire`` and
    ``extra`` keys; values as the scenario schema allows them)."""
    wire = turn.get("wire") or {}
    extra = turn.get("extra") or {}
    names: list[str] = []
    if "split" in wire:
        names.append("wire.split")
    if wire.get("usage", "full") != "full":
        names.append(f"wire.usage={wire['usage']}")
    if "content" in wire:
        names.append(f"wire.content={wire['content']}")
    indexes = wire.get("toolCallIndexes")
    if indexes is not None and list(indexes) != list(range(len(indexes))):
        names.append("wire.toolCallIndexes=gaps")
    if wire.get("omitToolCallIndex"):
        names.append("wire.omitToolCallIndex")
    if wire.get("toolCallOrder", "sequential") != "sequential":
        names.append(f"wire.toolCallOrder={wire['toolCallOrder']}")
    names.extend(f"extra.{key}" for key in ("extraMessageKeys", "extraBlocks", "extraResponseKeys", "extraEvents")
                 if extra.get(key))
    return names


# Shapes only a stream carries: a JSON response has no chunks, deltas or extra events.
STREAM_ONLY = frozenset({
    "wire.split", "wire.toolCallIndexes=gaps", "wire.omitToolCallIndex", "wire.toolCallOrder=reversed",
    "wire.toolCallOrder=interleaved", "extra.extraEvents",
})


def gateway_shapes(scenario: Any, style: str | None = None, streamed: bool | None = None) -> list[str]:
    """The gateway shapes a scenario's scripted turns put on the wire, sorted, in ``style``
    (a variant's) or in any style the scenario runs in; ``streamed=False`` leaves out the
    shapes only a stream carries (a variant whose entry is not ``stream`` gets JSON).
    ``scenario`` is a ``toolnexus_conformance.scenario.model.Scenario``, its JSON object, or a list of neutral
    turns (then give the style, or every style counts). The parity report calls this to say
    which findings come from gateway shapes."""
    data = getattr(scenario, "data", scenario)
    if isinstance(data, Mapping):
        turns: Iterable[Mapping[str, Any]] = [*data.get("turns", []), *(data.get("resume") or {}).get("turns", [])]
        styles = [style] if style is not None else list(data.get("styles", SHAPES_STYLES))
    else:
        turns = data
        styles = [style] if style is not None else list(SHAPES_STYLES)
    found = {
        name
        for turn in turns
        for name in turn_shapes(turn)
        if any(SHAPES[name].origin.get(s) == GATEWAY for s in styles)
        and (streamed is not False or name not in STREAM_ONLY)
    }
    return sorted(found)


SHAPES_STYLES = ("openai", "anthropic")


@dataclass(frozen=True)
class ScriptedSplit:
    every: int | None = None
    at: tuple[int, ...] = ()
    utf8: bool = False
    pause_ms: int = 2

    def boundaries(self, stream: bytes) -> list[int]:
        """Sorted byte offsets strictly inside ``stream`` where a piece ends."""
        cuts: set[int] = {offset for offset in self.at if 0 < offset < len(stream)}
        if self.every:
            cuts.update(range(self.every, len(stream), self.every))
        if self.utf8:
            cuts.update(_inside_utf8(stream))
        return sorted(cuts)

    def pieces(self, events: tuple[bytes, ...]) -> tuple[bytes, ...]:
        """The stream cut at :meth:`boundaries`. A session refuses a script whose splits make
        more than MAX_PIECES pieces (script_check.py); should a longer model name than that
        check assumed push a stream past it, the pieces beyond go out as one."""
        stream = b"".join(events)
        edges = [0, *self.boundaries(stream), len(stream)]
        pieces = tuple(stream[a:b] for a, b in pairwise(edges) if b > a)
        if len(pieces) > MAX_PIECES:
            pieces = (*pieces[: MAX_PIECES - 1], b"".join(pieces[MAX_PIECES - 1 :]))
        return pieces

    def to_neutral(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.every is not None:
            out["every"] = self.every
        if self.at:
            out["at"] = list(self.at)
        if self.utf8:
            out["utf8"] = True
        out["pauseMs"] = self.pause_ms
        return out


@dataclass(frozen=True)
class ScriptedWire:
    split: ScriptedSplit | None = None
    usage: str = "full"
    content: str | None = None
    tool_call_indexes: tuple[int, ...] | None = None
    omit_tool_call_index: bool = False
    tool_call_order: str = "sequential"

    def to_neutral(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.split is not None:
            out["split"] = self.split.to_neutral()
        if self.usage != "full":
            out["usage"] = self.usage
        if self.content is not None:
            out["content"] = self.content
        if self.tool_call_indexes is not None:
            out["toolCallIndexes"] = list(self.tool_call_indexes)
        if self.omit_tool_call_index:
            out["omitToolCallIndex"] = True
        if self.tool_call_order != "sequential":
            out["toolCallOrder"] = self.tool_call_order
        return out


def _inside_utf8(stream: bytes) -> list[int]:
    """One byte after the lead byte of every multi-byte UTF-8 character."""
    return [lead.end() for lead in _UTF8_LEAD.finditer(stream)]


_UTF8_LEAD = re.compile(rb"[\xc0-\xff]")


def wire_from_neutral(data: Any, where: str, calls: int) -> ScriptedWire:
    data = script_object(data, where, {"split", "usage", "content", "toolCallIndexes", "omitToolCallIndex", "toolCallOrder"})
    usage = _choice(data, "usage", USAGE_SHAPES, "full", where)
    order = _choice(data, "toolCallOrder", CALL_ORDERS, "sequential", where)
    content = data.get("content")
    if content is not None and content not in CONTENT_SHAPES:
        raise ScriptError(f"{where}.content: must be one of {', '.join(CONTENT_SHAPES)}")
    omit = data.get("omitToolCallIndex", False)
    if not isinstance(omit, bool):
        raise ScriptError(f"{where}.omitToolCallIndex: must be a boolean")
    if omit and calls > 1:
        raise ScriptError(
            f"{where}.omitToolCallIndex: only for a turn with one tool call ({calls} calls without an index "
            "would all be index 0)"
        )
    indexes = data.get("toolCallIndexes")
    if indexes is not None:
        if not isinstance(indexes, list) or not all(_count(i) for i in indexes):
            raise ScriptError(f"{where}.toolCallIndexes: must be a list of non-negative integers")
        if len(indexes) != calls or len(set(indexes)) != len(indexes):
            raise ScriptError(f"{where}.toolCallIndexes: needs one distinct index per tool call ({calls})")
        indexes = tuple(indexes)
    split = _split_from_neutral(data["split"], f"{where}.split") if "split" in data else None
    return ScriptedWire(split, usage, content, indexes, omit, order)


def _split_from_neutral(data: Any, where: str) -> ScriptedSplit:
    data = script_object(data, where, {"every", "at", "utf8", "pauseMs"})
    every = data.get("every")
    if every is not None and (not _count(every) or every < 1):
        raise ScriptError(f"{where}.every: must be a positive integer")
    at = data.get("at", [])
    if not isinstance(at, list) or not all(_count(offset) for offset in at):
        raise ScriptError(f"{where}.at: must be a list of non-negative integers")
    utf8 = data.get("utf8", False)
    if not isinstance(utf8, bool):
        raise ScriptError(f"{where}.utf8: must be a boolean")
    pause = data.get("pauseMs", 2)
    if not _count(pause) or pause > MAX_PAUSE_MS:
        raise ScriptError(f"{where}.pauseMs: must be an integer from 0 to {MAX_PAUSE_MS}")
    if every is None and not at and not utf8:
        raise ScriptError(f"{where}: says nowhere to split (give every, at or utf8)")
    return ScriptedSplit(every, tuple(sorted(set(at))), utf8, pause)


def _choice(data: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str, where: str) -> str:
    value = data.get(key, default)
    if value not in allowed:
        raise ScriptError(f"{where}.{key}: must be one of {', '.join(allowed)}")
    return str(value)


def _count(value: Any) -> bool:
    # bool is an int subclass; `true` as an offset is a script typo
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
