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

This module owns parsing that object and cutting a stream into pieces; the renderers in
``openai.py`` and ``anthropic.py`` apply the rest."""

from __future__ import annotations

from collections.abc import Mapping
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
        stream = b"".join(events)
        edges = [0, *self.boundaries(stream), len(stream)]
        pieces = tuple(stream[a:b] for a, b in pairwise(edges) if b > a)
        if len(pieces) > MAX_PIECES:
            raise ScriptError(f"wire.split cuts this stream into {len(pieces)} pieces; at most {MAX_PIECES}")
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
    return [i + 1 for i, byte in enumerate(stream) if byte >= 0xC0]


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
