"""The §8 turn loop shared by run, ask, stream and resume: one model request per turn,
tool calls of a turn run concurrently, results recorded in tool-call order, the durable
halt of §10, and max-turn exhaustion.

The loop reports progress to an ``EventSink`` as neutral stream events; the
non-streaming entry points pass a sink that drops them. It never adds a user turn
itself: the caller hands it the opening transcript (a prompt turn, or a repaired halted
turn on resume).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ProviderError
from .execution import CallRunner, EventSink, WaitFor
from .hooks import Hooks
from .metrics import Metrics
from .providers import Provider, Turn
from .providers.base import add_usage, usage_of
from .suspension import CallOutcome, SuspensionExtension, settle
from .transport import encode_body, is_http_error, new_http_client
from .types import Request, RunResult, Status, Tool

if TYPE_CHECKING:
    from typing import TypeAlias

    # httpx.AsyncClient by default; a client installed through transport.use_client has its shape.
    HTTPClient: TypeAlias = Any

EXCERPT_CHARS = 200


@dataclass
class LoopConfig:
    """Everything about a client the loop needs (built once by the Client)."""

    provider: Provider
    base_url: str
    api_key: str
    model: str
    max_turns: int
    system_prompt: str
    wait_for: WaitFor | None
    hooks: Hooks
    metrics: Metrics
    extension: SuspensionExtension
    http_client: HTTPClient | None = None


def _excerpt(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= EXCERPT_CHARS else one_line[:EXCERPT_CHARS] + "…"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


async def gather_in_order(jobs: Sequence[Awaitable[CallOutcome]]) -> list[CallOutcome]:
    """Run jobs concurrently, results in job order; the first failure cancels the rest."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


@dataclass
class RunState:
    """What a run has accumulated so far (kept outside the turn loop for the run metric)."""

    turns: int = 0
    usage: dict[str, int] = field(default_factory=lambda: usage_of(0, 0))
    records: list[dict[str, Any]] = field(default_factory=list)


def tool_call_record(outcome: CallOutcome) -> dict[str, Any]:
    return {
        "id": outcome.call.id,
        "name": outcome.call.name,
        "args": outcome.args,
        "output": outcome.result.output,
        "isError": outcome.result.is_error,
    }


class Loop:
    def __init__(self, config: LoopConfig) -> None:
        self.config = config

    def runner(self, tools: Sequence[Tool], events: EventSink) -> CallRunner:
        c = self.config
        return CallRunner(
            {t.name: t for t in reversed(list(tools))},  # reversed: the first of a name wins
            hooks=c.hooks,
            metrics=c.metrics,
            extension=c.extension,
            wait_for=c.wait_for,
            events=events,
        )

    @contextlib.asynccontextmanager
    async def _http(self) -> AsyncIterator[HTTPClient]:
        if self.config.http_client is not None:
            yield self.config.http_client
            return
        async with new_http_client() as client:
            yield client

    async def _request(
        self, http: HTTPClient, body: dict[str, Any], model: str, streaming: bool, events: EventSink
    ) -> Turn:
        c = self.config
        url, headers = c.provider.url(c.base_url), c.provider.headers(c.api_key)
        content = encode_body(body)  # the provider's headers name its type
        started = time.perf_counter()
        try:
            if streaming:
                async with http.stream("POST", url, content=content, headers=headers) as response:
                    if not response.is_success:
                        await response.aread()
                        await c.metrics.llm(model, response.status_code, _ms(started), usage_of(0, 0))
                        raise ProviderError(f"LLM {response.status_code}: {_excerpt(response.text)}")
                    turn = await c.provider.read_stream(
                        response.aiter_lines(), lambda delta: events.emit({"type": "text", "delta": delta})
                    )
                    status = response.status_code
            else:
                response = await http.post(url, content=content, headers=headers)
                status = response.status_code
                if not response.is_success:
                    await c.metrics.llm(model, status, _ms(started), usage_of(0, 0))
                    raise ProviderError(f"LLM {status}: {_excerpt(response.text)}")
                try:
                    payload = response.json()
                except ValueError:
                    raise ProviderError(f"LLM response is not JSON: {_excerpt(response.text)}") from None
                turn = c.provider.parse(payload)
        except Exception as exc:
            if not is_http_error(exc):  # httpx's errors, or an installed client's (transport.py)
                raise
            raise ProviderError(f"LLM request to {url} failed: {type(exc).__name__}: {exc}") from None
        await c.metrics.llm(model, status, _ms(started), turn.usage)
        return turn

    async def run(
        self, *, tools: Sequence[Tool], messages: list[dict[str, Any]], streaming: bool, events: EventSink
    ) -> RunResult:
        """Run turns from ``messages`` (mutated in place) until done, halted or exhausted."""
        c = self.config
        started = time.perf_counter()
        state = RunState()
        try:
            async with self._http() as http:
                result = await self._turns(http, tools, messages, streaming, events, state)
        except Exception as exc:
            error = str(exc) or type(exc).__name__
            await c.metrics.run(c.model, state.turns, len(state.records), state.usage["totalTokens"], _ms(started), error)
            raise
        await c.metrics.run(c.model, state.turns, len(state.records), state.usage["totalTokens"], _ms(started))
        return result

    async def _turns(
        self,
        http: HTTPClient,
        tools: Sequence[Tool],
        messages: list[dict[str, Any]],
        streaming: bool,
        events: EventSink,
        state: RunState,
    ) -> RunResult:
        c = self.config
        runner = self.runner(tools, events)

        def finish(text: str, status: Status, limit: str | None = None, halt: Request | None = None) -> RunResult:
            return RunResult(
                text=text, messages=messages, status=status, model=c.model, turns=state.turns,
                tool_calls=state.records, usage=dict(state.usage), limit=limit, pending=halt,
            )

        while state.turns < c.max_turns:
            state.turns += 1
            override = await c.hooks.before_llm(
                {"messages": list(messages), "tools": list(tools), "model": c.model, "turn": state.turns}
            ) or {}
            model = override.get("model", c.model)
            body = c.provider.body(
                model,
                list(override.get("messages", messages)),
                list(override.get("tools", tools)),
                c.system_prompt,
                streaming,
            )
            turn = await self._request(http, body, model, streaming, events)
            add_usage(state.usage, turn.usage)
            await c.hooks.after_llm(
                {"model": model, "turn": state.turns, "response": turn.message, "usage": dict(turn.usage)}
            )
            messages.append(turn.message)
            if not turn.wants_tools:
                events.emit({"type": "usage", "usage": dict(state.usage)})
                return finish(turn.text, "done")
            for call in turn.calls:
                events.emit({"type": "tool_call", "id": call.id, "name": call.name, "args": call.args})
            outcomes = await gather_in_order([runner.run(call, state.turns) for call in turn.calls])
            settlement = settle(outcomes, c.extension)
            entries = [c.provider.result_entry(o.call.id, o.result.output, o.result.is_error) for o in settlement.kept]
            messages.extend(c.provider.result_messages(entries))
            state.records.extend(tool_call_record(o) for o in settlement.kept)
            for o in settlement.kept:
                if o.suspended is None:  # the halted call gets no tool_result event
                    events.emit({"type": "tool_result", "id": o.call.id, "name": o.call.name,
                          "output": o.result.output, "isError": o.result.is_error})
            if settlement.halt is not None:
                events.emit({"type": "pending", "request": settlement.halt.to_wire()})
                return finish(settlement.halt.prompt, "pending", halt=settlement.halt)
        # Out of turns: "incomplete" only when there is no text to report (as the Python port).
        text = c.provider.exhausted_text(messages)
        return finish(text, "incomplete", limit="maxTurns") if text == "" else finish(text, "done")

