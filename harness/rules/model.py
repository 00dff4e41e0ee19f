"""What a scenario says should happen, derived once for every check that needs it.

Checks compare a port's record with facts read from the scenario itself (which calls are
relay calls, which suspend, what the raw arguments were, what the resume Answer supplies),
never with another port's output, so a check means the same thing for every port.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..scenario import Variant


@dataclass(frozen=True)
class ScriptedCall:
    id: str
    name: str
    raw_arguments: str
    kind: str  # "relay" | "suspend" | "real" | "unknown"

    @property
    def arguments(self) -> Any:
        try:
            return json.loads(self.raw_arguments)
        except json.JSONDecodeError:
            return None


def tools_by_name(variant: Variant) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in variant.toolkit()["tools"]}


def relay_tool_names(variant: Variant) -> set[str]:
    return {t["name"] for t in variant.toolkit()["tools"] if t.get("relay")}


def hook_suspends(variant: Variant) -> set[str]:
    rules = ((variant.scenario.data.get("host") or {}).get("hooks") or {}).get("beforeTool", [])
    return {r["tool"] for r in rules if "suspend" in r}


def classify(variant: Variant, turn: dict[str, Any]) -> list[ScriptedCall]:
    tools = tools_by_name(variant)
    hooked = hook_suspends(variant)
    out = []
    for call in turn.get("toolCalls", []):
        tool = tools.get(call["name"])
        if tool is None:
            kind = "unknown"
        elif tool.get("relay"):
            kind = "relay"
        elif call["name"] in hooked or {"suspend", "alwaysSuspend"} & set(tool.get("behaviour", {})):
            kind = "suspend"
        else:
            kind = "real"
        out.append(ScriptedCall(call["id"], call["name"], call["arguments"], kind))
    return out


def first_phase_turns(variant: Variant) -> list[dict[str, Any]]:
    return list(variant.scenario.data["turns"])


def halting_turn(variant: Variant) -> list[ScriptedCall] | None:
    """The last scripted first-phase turn with tool calls (where a durable run halts)."""
    for turn in reversed(first_phase_turns(variant)):
        if turn.get("toolCalls"):
            return classify(variant, turn)
    return None


def all_scripted_calls(variant: Variant) -> dict[str, ScriptedCall]:
    data = variant.scenario.data
    turns = list(data["turns"]) + list((data.get("resume") or {}).get("turns", []))
    return {c.id: c for turn in turns for c in classify(variant, turn)}


def rewritten_args(variant: Variant) -> dict[str, Any]:
    rules = ((variant.scenario.data.get("host") or {}).get("hooks") or {}).get("beforeTool", [])
    return {r["tool"]: r["args"] for r in rules if "args" in r}


BUILTIN_NAMES = frozenset(
    {"bash", "read", "write", "edit", "grep", "glob", "webfetch", "question", "apply_patch", "todowrite"}
)
