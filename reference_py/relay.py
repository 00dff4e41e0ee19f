"""Relay mode (ADR 0010): declaration-only tools whose calls the caller executes.

Owns ``relay_tool`` and the relay refinements of §10, plugged into the loop through
:class:`RelayExtension`: stamping the provider call id into ``data.calls``, merging a
turn's relay calls into the first relay Request on the durable path, and reading relay
results from an Answer on resume. Nothing else in the package imports this module, so a
client built with ``relay=False`` runs without it ever being loaded.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .answers import shorthand_result, supplied_results
from .providers.base import Call, compact_json
from .suspension import declined, no_result_supplied
from .types import RELAY_KIND, Answer, Request, Tool, ToolContext, ToolResult, pending

RELAY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def relay_prompt(name: str) -> str:
    return f"relay tool call {name} to the caller for execution"


def relay_calls(request: Request) -> list[dict[str, Any]]:
    """The ``data.calls`` entries of a relay Request (empty for any other Request)."""
    if not request.is_relay or not request.data:
        return []
    calls = request.data.get("calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def relay_result(
    request: Request, answer: Answer, call_id: str, name: str, *, missing: ToolResult
) -> ToolResult:
    """One relay call's result from the host's Answer: declined when not ok, else the
    result with its id, else the shorthand when the Request carried exactly one call."""
    if not answer.ok:
        return declined(request)
    by_id = supplied_results(answer)
    if call_id in by_id:
        return by_id[call_id]
    if len(relay_calls(request)) == 1:
        shorthand = shorthand_result(answer)
        if shorthand is not None:
            return shorthand
    return missing


def relay_tool(name: str, description: str, schema: dict[str, Any] | None = None) -> Tool:
    """A Tool that never executes anything itself: it suspends with the call, and on the
    §10 retry returns the caller's result from ``ctx.answer``."""

    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = ctx.raw_arguments if ctx.raw_arguments is not None else compact_json(args)
        call = {"id": ctx.call_id, "name": name, "input": args, "arguments": arguments}
        request = pending(kind=RELAY_KIND, prompt=relay_prompt(name), data={"calls": [call]})
        if ctx.answer is None:
            return request
        asked = request.metadata["pending"]  # type: ignore[index]
        missing = ToolResult(output=f"no result supplied for {name}", is_error=True)
        return relay_result(asked, ctx.answer, ctx.call_id, name, missing=missing)

    return Tool(
        name=name,
        description=description,
        input_schema=copy.deepcopy(RELAY_SCHEMA) if schema is None else schema,
        execute=execute,
        source="relay",
    )


def _with_calls(request: Request, calls: list[dict[str, Any]]) -> Request:
    return Request(
        id=request.id,
        kind=request.kind,
        prompt=request.prompt,
        url=request.url,
        data={**(request.data or {}), "calls": calls},
        expiresAt=request.expiresAt,
    )


class RelayExtension:
    """The relay refinements of §10; every method is inert for non-relay Requests."""

    def stamp(self, request: Request, call: Call, args: dict[str, Any], raw_arguments: str) -> Request:
        calls = relay_calls(request)
        if not calls or all(c.get("id") for c in calls):
            return request
        stamped = [dict(c, id=c.get("id") or call.id) for c in copy.deepcopy(calls)]
        return _with_calls(request, stamped)

    def merge(self, first: Request, later: Sequence[Request]) -> Request:
        if not first.is_relay:
            return first  # a non-relay halt is surfaced uncontaminated
        merged = copy.deepcopy(relay_calls(first))
        for request in later:
            merged.extend(copy.deepcopy(relay_calls(request)))
        return _with_calls(first, merged)

    def resume_result(self, pending: Request, answer: Answer, call: Call) -> ToolResult | None:
        if call.id not in {c.get("id") for c in relay_calls(pending)}:
            return None
        return relay_result(pending, answer, call.id, call.name, missing=no_result_supplied(call.name))
