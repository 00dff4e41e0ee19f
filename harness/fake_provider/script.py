"""The scripted model turns a fake-provider session replays, in the neutral format shared
by scenarios and tests (docs: team brief, "Fake-provider script"):

    {"text": "optional", "toolCalls": [{"id", "name", "arguments": "<raw JSON text>"}],
     "usage": {"input": 3, "output": 5}, "stopReason": "optional override",
     "extra": {"extraMessageKeys": {"refusal": null}, "extraBlocks": [{"type": "thinking"}]}}

``extra`` scripts what a real provider adds beyond text and calls, so a scenario can see
whether a port keeps it: ``extraMessageKeys`` go into the OpenAI ``choices[0].message``,
``extraBlocks`` lead the Anthropic content list. Only the JSON (non-streaming) renderers
send them; streamed turns ignore ``extra``.

This module owns parsing and checking that format; rendering it per provider style lives
in ``openai.py`` and ``anthropic.py``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class ScriptError(ValueError):
    """A script that does not follow the neutral format; the message is one line."""


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

    def to_neutral(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.message_keys:
            out["extraMessageKeys"] = dict(self.message_keys)
        if self.blocks:
            out["extraBlocks"] = [dict(b) for b in self.blocks]
        return out


@dataclass(frozen=True)
class ScriptedTurn:
    """One model response. ``stop_reason`` overrides the style's derived finish reason."""

    text: str | None = None
    tool_calls: tuple[ScriptedCall, ...] = ()
    usage: ScriptedUsage = field(default_factory=ScriptedUsage)
    stop_reason: str | None = None
    extra: ScriptedExtra = field(default_factory=ScriptedExtra)

    @classmethod
    def from_neutral(cls, data: Mapping[str, Any], where: str = "turn") -> ScriptedTurn:
        if not isinstance(data, Mapping):
            raise ScriptError(f"{where}: must be a JSON object")
        unknown = set(data) - {"text", "toolCalls", "usage", "stopReason", "extra"}
        if unknown:
            raise ScriptError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
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
        return out


@dataclass(frozen=True)
class Script:
    """The model turns of one scenario run, served in order, one per provider request."""

    turns: tuple[ScriptedTurn, ...]

    @classmethod
    def from_neutral(cls, data: Sequence[Mapping[str, Any]]) -> Script:
        if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
            raise ScriptError("script: must be a list of turns")
        return cls(
            tuple(ScriptedTurn.from_neutral(t, f"turn[{i}]") for i, t in enumerate(data))
        )

    def check_for_anthropic(self) -> None:
        """Anthropic sends ``input`` as a parsed object, so every argument text must parse."""
        for turn in self.turns:
            for call in turn.tool_calls:
                call.parsed_arguments()


def _call_from_neutral(data: Any, where: str) -> ScriptedCall:
    if not isinstance(data, Mapping):
        raise ScriptError(f"{where}: must be a JSON object")
    unknown = set(data) - {"id", "name", "arguments"}
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("id", "name", "arguments"):
        if not isinstance(data.get(key), str):
            raise ScriptError(f"{where}.{key}: must be a string")
    return ScriptedCall(id=data["id"], name=data["name"], arguments=data["arguments"])


# the keys and block types the renderers own; an extra may not shadow them
_OWNED_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls"})
_OWNED_BLOCK_TYPES = frozenset({"text", "tool_use"})


def _extra_from_neutral(data: Any, where: str) -> ScriptedExtra:
    if not isinstance(data, Mapping):
        raise ScriptError(f"{where}: must be a JSON object")
    unknown = set(data) - {"extraMessageKeys", "extraBlocks"}
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    keys = data.get("extraMessageKeys", {})
    if not isinstance(keys, Mapping):
        raise ScriptError(f"{where}.extraMessageKeys: must be a JSON object")
    shadowed = sorted(set(keys) & _OWNED_MESSAGE_KEYS)
    if shadowed:
        raise ScriptError(f"{where}.extraMessageKeys: may not set {', '.join(shadowed)}")
    blocks = data.get("extraBlocks", [])
    if not isinstance(blocks, list):
        raise ScriptError(f"{where}.extraBlocks: must be a list")
    for i, block in enumerate(blocks):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise ScriptError(f"{where}.extraBlocks[{i}]: must be an object with a string type")
        if block["type"] in _OWNED_BLOCK_TYPES:
            raise ScriptError(f"{where}.extraBlocks[{i}]: type {block['type']} is rendered from text/toolCalls")
    return ScriptedExtra(message_keys=tuple(keys.items()), blocks=tuple(blocks))


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
