"""The scripted model turns a fake-provider session replays, in the neutral format shared
by scenarios and tests (docs: team brief, "Fake-provider script"):

    {"text": "optional", "toolCalls": [{"id", "name", "arguments": "<raw JSON text>"}],
     "usage": {"input": 3, "output": 5}, "stopReason": "optional override",
     "extra": {"extraMessageKeys": {"refusal": null}, "extraBlocks": [{"type": "thinking"}],
               "extraResponseKeys": {"system_fingerprint": "fp"}, "extraEvents": [{...}]},
     "wire": {...}}

``extra`` scripts what a real provider adds beyond text and calls, so a scenario can see
whether a port keeps it: ``extraMessageKeys`` go into the OpenAI ``choices[0].message``
(streamed: the first delta), ``extraBlocks`` lead the Anthropic content list (streamed as
the API streams them: a thinking block empty at its start, then ``thinking_delta`` and
``signature_delta``; any other block whole in its ``content_block_start``),
``extraResponseKeys`` go on the response object (streamed: every OpenAI chunk, the
Anthropic ``message_start`` message), and ``extraEvents`` are extra SSE events sent right
after the first one (JSON responses have no place for them). ``wire`` varies how the turn
is put on the wire (chunk boundaries, usage and content shapes, tool-call deltas); see
``wire.py``.

This module owns parsing and checking that format; rendering it per provider style lives
in ``openai.py`` and ``anthropic.py``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .script_error import ScriptError, script_object
from .wire import ScriptedWire, wire_from_neutral


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call the model makes; ``arguments`` is the raw text the provider sends."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a JSON object, key order kept (an empty string means ``{}``)."""
        if self.arguments.strip() == "":
            return {}
        try:
            value = json.loads(self.arguments)
        except json.JSONDecodeError as exc:
            raise ScriptError(
                f"tool call {self.id!r}: arguments are not valid JSON ({exc.msg})"
            ) from None
        if not isinstance(value, dict):
            raise ScriptError(f"tool call {self.id!r}: arguments must be a JSON object")
        return value


@dataclass(frozen=True)
class ScriptedUsage:
    input: int = 0
    output: int = 0


@dataclass(frozen=True)
class ScriptedExtra:
    """Provider additions a port may keep or drop (SPEC.md loop.assistant-extra-keys)."""

    message_keys: tuple[tuple[str, Any], ...] = ()
    blocks: tuple[Mapping[str, Any], ...] = ()
    response_keys: tuple[tuple[str, Any], ...] = ()
    events: tuple[Mapping[str, Any], ...] = ()

    def to_neutral(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.message_keys:
            out["extraMessageKeys"] = dict(self.message_keys)
        if self.blocks:
            out["extraBlocks"] = [dict(b) for b in self.blocks]
        if self.response_keys:
            out["extraResponseKeys"] = dict(self.response_keys)
        if self.events:
            out["extraEvents"] = [dict(e) for e in self.events]
        return out


@dataclass(frozen=True)
class ScriptedTurn:
    """One model response. ``stop_reason`` overrides the style's derived finish reason."""

    text: str | None = None
    tool_calls: tuple[ScriptedCall, ...] = ()
    usage: ScriptedUsage = field(default_factory=ScriptedUsage)
    stop_reason: str | None = None
    extra: ScriptedExtra = field(default_factory=ScriptedExtra)
    wire: ScriptedWire = field(default_factory=ScriptedWire)

    @classmethod
    def from_neutral(cls, data: Mapping[str, Any], where: str = "turn") -> ScriptedTurn:
        data = script_object(data, where, {"text", "toolCalls", "usage", "stopReason", "extra", "wire"})
        text = data.get("text")
        if text is not None and not isinstance(text, str):
            raise ScriptError(f"{where}.text: must be a string")
        stop_reason = data.get("stopReason")
        if stop_reason is not None and not isinstance(stop_reason, str):
            raise ScriptError(f"{where}.stopReason: must be a string")
        calls_data = data.get("toolCalls", [])
        if not isinstance(calls_data, list):
            raise ScriptError(f"{where}.toolCalls: must be a list")
        calls = tuple(
            _call_from_neutral(call, f"{where}.toolCalls[{i}]")
            for i, call in enumerate(calls_data)
        )
        return cls(
            text=text,
            tool_calls=calls,
            usage=_usage_from_neutral(data.get("usage", {}), f"{where}.usage"),
            stop_reason=stop_reason,
            extra=_extra_from_neutral(data.get("extra", {}), f"{where}.extra"),
            wire=wire_from_neutral(data.get("wire", {}), f"{where}.wire", len(calls)),
        )

    def to_neutral(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.tool_calls:
            out["toolCalls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        out["usage"] = {"input": self.usage.input, "output": self.usage.output}
        if self.stop_reason is not None:
            out["stopReason"] = self.stop_reason
        if self.extra.to_neutral():
            out["extra"] = self.extra.to_neutral()
        if self.wire.to_neutral():
            out["wire"] = self.wire.to_neutral()
        return out


@dataclass(frozen=True)
class Script:
    """The model turns of one scenario run, served in order, one per provider request."""

    turns: tuple[ScriptedTurn, ...]

    @classmethod
    def from_neutral(cls, data: Sequence[Mapping[str, Any]], where: str = "turn") -> Script:
        """``where`` names the list in errors (``turn[2].wire.usage: ...``)."""
        if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
            raise ScriptError("script: must be a list of turns")
        return cls(
            tuple(ScriptedTurn.from_neutral(t, f"{where}[{i}]") for i, t in enumerate(data))
        )


def _call_from_neutral(data: Any, where: str) -> ScriptedCall:
    data = script_object(data, where, {"id", "name", "arguments"})
    for key in ("id", "name", "arguments"):
        if not isinstance(data.get(key), str):
            raise ScriptError(f"{where}.{key}: must be a string")
    return ScriptedCall(id=data["id"], name=data["name"], arguments=data["arguments"])


# the keys and block types the renderers own; an extra may not shadow them
_OWNED_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls"})
_OWNED_BLOCK_TYPES = frozenset({"text", "tool_use"})
# response keys either style's renderer writes itself
_OWNED_RESPONSE_KEYS = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "type", "role", "content", "stop_reason", "stop_sequence"}
)


def _extra_keys(data: Mapping[str, Any], name: str, owned: frozenset[str], where: str) -> Mapping[str, Any]:
    """The extra keys ``data[name]`` adds, refused where they would set a key the renderer owns."""
    keys = data.get(name, {})
    if not isinstance(keys, Mapping):
        raise ScriptError(f"{where}.{name}: must be a JSON object")
    shadowed = sorted(set(keys) & owned)
    if shadowed:
        raise ScriptError(f"{where}.{name}: may not set {', '.join(shadowed)}")
    return keys


def _extra_from_neutral(data: Any, where: str) -> ScriptedExtra:
    data = script_object(data, where, {"extraMessageKeys", "extraBlocks", "extraResponseKeys", "extraEvents"})
    keys = _extra_keys(data, "extraMessageKeys", _OWNED_MESSAGE_KEYS, where)
    blocks = data.get("extraBlocks", [])
    if not isinstance(blocks, list):
        raise ScriptError(f"{where}.extraBlocks: must be a list")
    for i, block in enumerate(blocks):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise ScriptError(f"{where}.extraBlocks[{i}]: must be an object with a string type")
        if block["type"] in _OWNED_BLOCK_TYPES:
            raise ScriptError(f"{where}.extraBlocks[{i}]: type {block['type']} is rendered from text/toolCalls")
    response_keys = _extra_keys(data, "extraResponseKeys", _OWNED_RESPONSE_KEYS, where)
    events = data.get("extraEvents", [])
    if not isinstance(events, list) or not all(isinstance(e, Mapping) for e in events):
        raise ScriptError(f"{where}.extraEvents: must be a list of JSON objects")
    return ScriptedExtra(
        message_keys=tuple(keys.items()),
        blocks=tuple(blocks),
        response_keys=tuple(response_keys.items()),
        events=tuple(events),
    )


def _usage_from_neutral(data: Any, where: str) -> ScriptedUsage:
    if not isinstance(data, Mapping):
        raise ScriptError(f"{where}: must be a JSON object")
    values: dict[str, int] = {}
    for key in ("input", "output"):
        value = data.get(key, 0)
        # bool is an int subclass; a token count of `true` is a script typo
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ScriptError(f"{where}.{key}: must be a non-negative integer")
        values[key] = value
    return ScriptedUsage(**values)
