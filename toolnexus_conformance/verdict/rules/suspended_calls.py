"""Which Request a suspending call raises, so stream and suspension checks can tie a
pending event, a waitFor or a halt to the call that caused it without trusting the port."""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.run.facts import Facts, ScriptedCall


def request_is_for(facts: Facts, call: ScriptedCall, request: Any) -> bool:
    """Whether ``request`` is the suspension of ``call`` (relay: its id is in data.calls)."""
    if not isinstance(request, dict):
        return False
    if call.kind == "relay":
        calls = (request.get("data") or {}).get("calls")
        return isinstance(calls, list) and any(isinstance(c, dict) and c.get("id") == call.id for c in calls)
    own = facts.native_request(call)
    if own is None:
        return False
    if "id" not in own:  # the port generated the id: the Request is known by what it asks
        return all(request.get(k) == v for k, v in own.items())
    return request.get("id") == own.get("id")
