"""Host-side helpers for the reference tests: the client factory, tools with a scripted
behaviour that log every execution, metric/hook recorders, and one driver that runs a
prompt on the run or the stream path and returns the same observables for both."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from scripted import AB_SCHEMA, API_KEY, BASE_URL, MODEL

from reference_py import (
    Answer,
    Request,
    ToolContext,
    ToolResult,
    create_client,
    create_toolkit,
    define_tool,
    pending,
)

PATHS = ("run", "stream")


def make_client(style: str, **options: Any) -> Any:
    return create_client(base_url=BASE_URL, style=style, model=MODEL, api_key=API_KEY, **options)


@dataclass
class Log:
    """Every tool execution (name, args, ctx.answer) in the order they started."""

    executions: list[tuple[str, dict[str, Any], Answer | None]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    before: list[dict[str, Any]] = field(default_factory=list)
    after: list[dict[str, Any]] = field(default_factory=list)

    def ran(self, name: str) -> int:
        return sum(1 for n, _, _ in self.executions if n == name)

    def on_metric(self, event: dict[str, Any]) -> None:
        self.metrics.append(dict(event))

    def tool_events(self) -> list[dict[str, Any]]:
        """Tool metric events without the timing (asserted present separately)."""
        out = []
        for event in self.metrics:
            if event.get("event") == "tool":
                assert isinstance(event.get("ms"), (int, float)), event
                out.append({k: v for k, v in event.items() if k != "ms"})
        return out

    def hooks(self, before: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, Any]:
        def before_tool(event: dict[str, Any]) -> Any:
            self.before.append(dict(event))
            return before(event) if before else None

        def after_tool(event: dict[str, Any]) -> None:
            self.after.append(dict(event))

        return {"before_tool": before_tool, "after_tool": after_tool}


def real_tool(log: Log, name: str, output: str, delay: float = 0.0,
              gate: Callable[[], Awaitable[None]] | None = None) -> Any:
    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        log.executions.append((name, dict(args), ctx.answer))
        if gate is not None:
            await gate()
        if delay:
            await asyncio.sleep(delay)
        return ToolResult(output=output)

    return define_tool(name=name, description=f"the {name} tool", input_schema=AB_SCHEMA,
                       execute=execute)


def suspending_tool(log: Log, name: str, request_id: str, prompt: str, *,
                    kind: str = "authorization", url: str | None = None,
                    delay: float = 0.0, always: bool = False) -> Any:
    """Suspends on first execution; with an answer returns ``"<name> ok: <answer data>"``
    (or suspends again when ``always``)."""

    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        log.executions.append((name, dict(args), ctx.answer))
        if delay:
            await asyncio.sleep(delay)
        if ctx.answer is None or always:
            return pending(kind=kind, prompt=prompt, id=request_id, url=url)
        token = (ctx.answer.data or {}).get("token", "")
        return ToolResult(output=f"{name} ok: {token}")

    return define_tool(name=name, description=f"the {name} tool", input_schema=AB_SCHEMA,
                       execute=execute)


async def toolkit(*tools: Any, builtins: bool = False) -> Any:
    return await create_toolkit(builtins=builtins, extra_tools=list(tools))


@dataclass
class Outcome:
    """What one run produced, the same on both paths."""

    result: dict[str, Any]  # RunResult.to_wire() / the done event's result
    events: list[dict[str, Any]]  # stream events ([] on the run path)


async def drive(client: Any, path: str, prompt: str, kit: Any = None,
                history: list[dict[str, Any]] | None = None) -> Outcome:
    if path == "run":
        if history is None:
            result = await client.run(prompt, toolkit=kit)
        else:
            result = await client.run(prompt, toolkit=kit, history=history)
        return Outcome(result.to_wire(), [])
    assert history is None, "the stream path takes no history"
    events = [dict(e) async for e in client.stream(prompt, toolkit=kit)]
    assert events and events[-1]["type"] == "done", f"stream did not end with done: {events}"
    return Outcome(events[-1]["result"], events)


def answer_results(request_id: str, *entries: tuple[str, str, bool]) -> Answer:
    return Answer(id=request_id, ok=True, data={"results": [
        {"id": i, "output": o, "isError": e} for i, o, e in entries]})


def pending_request(result: dict[str, Any]) -> Request:
    return Request.from_wire(result["pending"])
