"""Mutants of the streaming events and the conversation store (SPEC.md stream.*,
keys.stream-events, store.*)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from catalog import mutant, wrap


def _replace_sink(make_sink: Any) -> None:
    import reference_py.client as client

    client._QueueSink = make_sink(client._QueueSink)  # type: ignore[attr-defined]


@mutant("tool-call-events-late", "stream.tool-call-events-first",
        description="a turn's tool_call events are held back until after its first tool_result")
def _tool_calls_late(shim: ModuleType) -> None:
    def make_sink(base: Any) -> Any:
        class LateSink(base):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__()
                self.held: list[dict[str, Any]] = []

            def emit(self, event: dict[str, Any]) -> None:
                if event.get("type") == "tool_call":
                    self.held.append(event)
                    return
                super().emit(event)
                if event.get("type") in {"tool_result", "pending", "usage"}:
                    for held in self.held:
                        super().emit(held)
                    self.held.clear()

        return LateSink

    _replace_sink(make_sink)


@mutant("pending-events-dropped", "stream.pending-event", description="no pending stream event is emitted")
def _pending_dropped(shim: ModuleType) -> None:
    def make_sink(base: Any) -> Any:
        class Dropping(base):  # type: ignore[misc, valid-type]
            def emit(self, event: dict[str, Any]) -> None:
                if event.get("type") != "pending":
                    super().emit(event)

            async def deliver(self, event: dict[str, Any]) -> None:
                if event.get("type") != "pending":
                    await super().deliver(event)

        return Dropping

    _replace_sink(make_sink)


@mutant("tool-call-args-empty", "stream.event-fields", description="tool_call stream events carry args {} instead of the call's args")
def _args_empty(shim: ModuleType) -> None:
    def make_sink(base: Any) -> Any:
        class Emptying(base):  # type: ignore[misc, valid-type]
            def emit(self, event: dict[str, Any]) -> None:
                if event.get("type") == "tool_call":
                    event = {**event, "args": {}}
                super().emit(event)

        return Emptying

    _replace_sink(make_sink)


@mutant("stream-event-snake", "keys.stream-events", description="tool_result stream events write is_error instead of isError")
def _event_snake(shim: ModuleType) -> None:
    def make_sink(base: Any) -> Any:
        class Snake(base):  # type: ignore[misc, valid-type]
            def emit(self, event: dict[str, Any]) -> None:
                if event.get("type") == "tool_result":
                    event = {("is_error" if k == "isError" else k): v for k, v in event.items()}
                super().emit(event)

        return Snake

    _replace_sink(make_sink)


def _wrap_stream(change: Any) -> None:
    from reference_py.client import Client

    def make(original: Any) -> Any:
        def stream(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            return change(original(self, *args, **kwargs))

        return stream

    wrap(Client, "stream", make)


@mutant("event-after-done", "stream.done-last", description="an empty text event follows done")
def _after_done(shim: ModuleType) -> None:
    async def change(events: AsyncIterator[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async for event in events:
            yield event
        yield {"type": "text", "delta": ""}

    _wrap_stream(change)


@mutant("streamed-text-marked", "loop.final-text", description="a streamed run's final text gets ' (streamed)' appended")
def _streamed_text(shim: ModuleType) -> None:
    async def change(events: AsyncIterator[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async for event in events:
            if event.get("type") == "done" and event["result"].get("status") == "done":
                event["result"]["text"] += " (streamed)"
            yield event

    _wrap_stream(change)


@mutant("streamed-limit-set", "stream.same-observables",
        description="a streamed run that ends done names a limit ('stream') its non-streamed run does not")
def _streamed_limit(shim: ModuleType) -> None:
    async def change(events: AsyncIterator[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async for event in events:
            if event.get("type") == "done" and event["result"].get("status") == "done":
                event["result"]["limit"] = "stream"
            yield event

    _wrap_stream(change)


@mutant("usage-every-turn", "stream.usage-before-done", description="a usage event follows every model turn, tool turns included")
def _usage_every_turn(shim: ModuleType) -> None:
    from reference_py.loop import Loop

    def make(original: Any) -> Any:
        async def request(self: Any, http: Any, body: Any, model: str, streaming: bool, events: Any) -> Any:
            turn = await original(self, http, body, model, streaming, events)
            if turn.wants_tools:
                events.emit({"type": "usage", "usage": dict(turn.usage)})
            return turn

        return request

    wrap(Loop, "_request", make)


@mutant("ask-forgets-halt", "store.ask-saves-halt", description="ask saves the transcript only when the run finished")
def _ask_forgets(shim: ModuleType) -> None:
    from reference_py.client import Client

    async def ask(self: Any, prompt: str, toolkit: Any = None, id: str | None = None) -> Any:  # noqa: A002
        result = await self.run(prompt, toolkit, await self._history(id))
        if id and result.status != "pending":
            await self._store.save(id, result.messages)
        return result

    Client.ask = ask  # type: ignore[method-assign]


@mutant("ask-ignores-history", "store.ask-loads-history", description="ask and stream never load the stored transcript")
def _ask_ignores(shim: ModuleType) -> None:
    from reference_py.client import Client

    async def history(self: Any, id: str | None) -> list[Any]:  # noqa: A002
        return []

    Client._history = history  # type: ignore[method-assign]


@mutant("ask-with-answer-unsaved", "store.ask-with-answer-saves", description="askWithAnswer does not save the resumed transcript")
def _ask_with_answer_unsaved(shim: ModuleType) -> None:
    from reference_py.client import Client

    async def ask_with_answer(self: Any, toolkit: Any = None, id: str | None = None, pending: Any = None, answer: Any = None) -> Any:  # noqa: A002
        return await self.run_with_answer(toolkit, await self._store.get(id), pending, answer)

    Client.ask_with_answer = ask_with_answer  # type: ignore[method-assign]


@mutant("run-saves-to-store", "store.run-stateless", description="run and stream without an id save their transcript under 'last-run'")
def _run_saves(shim: ModuleType) -> None:
    from reference_py.client import Client

    def make(original: Any) -> Any:
        async def run(self: Any, prompt: str, toolkit: Any = None, history: Any = None) -> Any:
            result = await original(self, prompt, toolkit, history)
            await self._store.save("last-run", result.messages)
            return result

        return run

    wrap(Client, "run", make)
    # The shim hands the client the host's store only when the scenario asks for one; a
    # port that always wires its store in is the realistic shape of this bug.
    wrap(shim.Shim, "run", lambda original: lambda self, p: original(self, {**p, "store": True}))


@mutant("store-load-retyped", "store.verbatim-round-trip",
        description="a transcript loaded from the store has string user contents turned into text blocks")
def _store_retyped(shim: ModuleType) -> None:
    def retyped(message: Any) -> Any:
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return {**message, "content": [{"type": "text", "text": message["content"]}]}
        return message

    def make(original: Any) -> Any:
        async def get(self: Any, id: str) -> Any:  # noqa: A002
            messages = await original(self, id)
            return [retyped(m) for m in messages] if messages is not None else None

        return get

    wrap(shim._HostStore, "get", make)


@mutant("pending-event-after-waitfor", "stream.pending-event",
        description="a stream's pending event reaches the consumer only after its waitFor returned")
def _pending_event_after_waitfor(shim: ModuleType) -> None:
    from reference_py.client import _QueueSink

    original_emit, original_deliver = _QueueSink.emit, _QueueSink.deliver
    held: list[dict[str, Any]] = []

    def flush(sink: Any) -> None:
        while held:
            original_emit(sink, held.pop(0))

    def emit(self: Any, event: dict[str, Any]) -> None:
        flush(self)
        original_emit(self, event)

    async def deliver(self: Any, event: dict[str, Any]) -> None:
        if event.get("type") == "pending":
            held.append(event)  # handed over with the next event: after waitFor returned
            return
        flush(self)
        await original_deliver(self, event)

    _QueueSink.emit = emit  # type: ignore[method-assign]
    _QueueSink.deliver = deliver  # type: ignore[method-assign]
