"""Which Request a suspending call raises, read from the scenario (tool behaviour, a
suspending beforeTool rule, or relay), so stream and suspension checks can tie a pending
event, a waitFor or a halt to the call that caused it without trusting the port."""

from __future__ import annotations

from typing import Any

from ..scenario import Variant
from .model import ScriptedCall, tools_by_name


def native_request(variant: Variant, call: ScriptedCall) -> dict[str, Any] | None:
    """The Request a non-relay suspending call raises first (hook rules win: the tool never runs)."""
    hooks = ((variant.scenario.data.get("host") or {}).get("hooks") or {}).get("beforeTool", [])
    for rule in hooks:
        if rule["tool"] == call.name and "suspend" in rule:
            return dict(rule["suspend"])
    behaviour = tools_by_name(variant).get(call.name, {}).get("behaviour", {})
    found = behaviour.get("suspend") or behaviour.get("alwaysSuspend")
    return dict(found) if found else None


def request_is_for(variant: Variant, call: ScriptedCall, request: Any) -> bool:
    """Whether ``request`` is the suspension of ``call`` (relay: its id is in data.calls)."""
    if not isinstance(request, dict):
        return False
    if call.kind == "relay":
        calls = (request.get("data") or {}).get("calls")
        return isinstance(calls, list) and any(isinstance(c, dict) and c.get("id") == call.id for c in calls)
    own = native_request(variant, call)
    return own is not None and request.get("id") == own.get("id")


def in_process(variant: Variant) -> bool:
    return "waitFor" in (variant.scenario.data.get("host") or {})
