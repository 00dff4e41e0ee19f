"""Running one tool call: the before_tool/after_tool hooks, the ``tool`` metric, unknown
tools, tool exceptions, and the §10 in-process resolution (``wait_for`` → declined, or one
retry with ``ctx.answer`` → unresolved if it suspends again).

Each call of a turn runs in its own task, and a suspension is resolved inside that task,
so every ``wait_for`` of a turn is outstanding at the same time: a host that parks its
callbacks until it has seen all N of them does not deadlock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from .answers import coerce_answer
from .errors import ToolnexusError
from .hooks import Hooks, maybe_await
from .metrics import Metrics
from .native import as_tool_result
from .providers.base import Call, compact_json
from .suspension import CallOutcome, SuspensionExtension, declined, placeholder, unresolved
from .types import Answer, Request, Tool, ToolContext, ToolResult, pending_of

WaitFor = Callable[[Request], Any]


class EventSink:
    """Where the loop reports stream events. ``emit`` is fire-and-forget; ``deliver`` returns
    only once the consumer has taken the event, so a ``pending`` event is seen before its
    ``wait_for`` runs. This base class drops everything (the non-streaming entry points)."""

    def emit(self, event: dict[str, Any]) -> None:
        """Report an event without waiting for it to be consumed."""

    async def deliver(self, event: dict[str, Any]) -> None:
        """Report an event and wait until the consumer has taken it."""


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


class CallRunner:
    """Executes the calls of one run against a toolkit's tools."""

    def __init__(
        self,
        tools: Mapping[str, Tool],
        *,
        hooks: Hooks,
        metrics: Metrics,
        extension: SuspensionExtension,
        wait_for: WaitFor | None,
        events: EventSink,
    ) -> None:
        self._tools = tools
        self._hooks = hooks
        self._metrics = metrics
        self._extension = extension
        self._wait_for = wait_for
        self._events = events

    def _source(self, name: str) -> str:
        tool = self._tools.get(name)
        # every port labels a call of an undeclared tool "custom" (loop.undeclared-tool-call)
        return tool.source if tool is not None else "custom"

    async def _execute(
        self, call: Call, args: dict[str, Any], raw: str, turn: int, answer: Answer | None
    ) -> ToolResult:
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolResult(output=f"Unknown tool: {call.name}", is_error=True)
        ctx = ToolContext(call_id=call.id, tool_name=call.name, answer=answer, raw_arguments=raw, turn=turn)
        try:
            return as_tool_result(await maybe_await(tool.execute(args, ctx)))
        except ToolnexusError:
            raise  # e.g. a malformed Answer read by the tool: the caller's mistake, not the tool's
        except Exception as exc:  # noqa: BLE001 - a failing tool is a result the model sees
            return ToolResult(output=f"tool {call.name} failed: {exc}", is_error=True)

    async def _after(self, call: Call, args: dict[str, Any], result: ToolResult, turn: int) -> ToolResult:
        event = {"name": call.name, "args": args, "result": result, "id": call.id, "turn": turn}
        replaced = await self._hooks.after_tool(event)
        return replaced if replaced is not None else result

    async def run(self, call: Call, turn: int) -> CallOutcome:
        """Execute one call; with no wait_for a suspension is returned unresolved."""
        args, raw = dict(call.args), call.raw_arguments
        override = await self._hooks.before_tool({"name": call.name, "args": args, "id": call.id, "turn": turn})
        result: ToolResult | None = None
        started = time.perf_counter()
        if override is not None:
            if "args" in override:
                args = dict(override["args"])
                raw = compact_json(args)
            result = override.get("result")
        if result is None:
            result = await self._execute(call, args, raw, turn, None)
        request = pending_of(result)
        if request is None:
            result = await self._after(call, args, result, turn)
            await self._metrics.tool(call.name, self._source(call.name), is_error=result.is_error, ms=_ms(started))
            return CallOutcome(call, args, result)
        # A suspension is normal operation: not a tool error, and after_tool is not called.
        request = self._extension.stamp(request, call, args, raw)
        await self._metrics.tool(call.name, self._source(call.name), is_error=False, ms=_ms(started), pending=True)
        if self._wait_for is None:
            return CallOutcome(call, args, placeholder(request), suspended=request)
        await self._events.deliver({"type": "pending", "request": request.to_wire()})
        answer = coerce_answer(await maybe_await(self._wait_for(request)), "wait_for answer")
        return CallOutcome(call, args, await self.retry(call, args, raw, turn, request, answer))

    async def retry(
        self, call: Call, args: dict[str, Any], raw: str, turn: int, request: Request, answer: Answer | None
    ) -> ToolResult:
        """The §10 retry: declined when not ok, else the tool once more with ``ctx.answer``."""
        if answer is None or not answer.ok:
            return declined(request)
        started = time.perf_counter()
        result = await self._execute(call, args, raw, turn, answer)
        result = await self._after(call, args, result, turn)
        suspended_again = pending_of(result) is not None
        await self._metrics.tool(
            call.name,
            self._source(call.name),
            is_error=False if suspended_again else result.is_error,
            ms=_ms(started),
            pending=suspended_again,
        )
        return unresolved(request) if suspended_again else result
