"""Observability events handed to ``on_metric``: ``llm`` per model request, ``tool`` per
executed call (``pending: true`` only for a suspension, which is not an error), and one
``run`` per run. Keys are the neutral camelCase shapes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .hooks import maybe_await

MetricSink = Callable[[dict[str, Any]], Any]


class Metrics:
    def __init__(self, sink: MetricSink | None) -> None:
        self._sink = sink

    async def _emit(self, event: dict[str, Any]) -> None:
        if self._sink is not None:
            await maybe_await(self._sink(event))

    async def llm(self, model: str, status: int, ms: float, usage: dict[str, int]) -> None:
        await self._emit(
            {
                "event": "llm",
                "model": model,
                "status": status,
                "ms": ms,
                "promptTokens": usage.get("promptTokens", 0),
                "completionTokens": usage.get("completionTokens", 0),
            }
        )

    async def tool(self, tool: str, source: str, *, is_error: bool, ms: float, pending: bool = False) -> None:
        event: dict[str, Any] = {"event": "tool", "tool": tool, "source": source, "isError": is_error, "ms": ms}
        if pending:
            event["pending"] = True
        await self._emit(event)

    async def run(
        self, model: str, turns: int, tool_calls: int, total_tokens: int, ms: float, error: str | None = None
    ) -> None:
        event: dict[str, Any] = {
            "event": "run",
            "model": model,
            "turns": turns,
            "toolCalls": tool_calls,
            "totalTokens": total_tokens,
            "ms": ms,
        }
        if error is not None:
            event["error"] = error
        await self._emit(event)
