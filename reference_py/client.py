"""The public Client: ``create_client`` and the async entry points run, ask, stream and the
answer-carrying resumes (run_with_answer, ask_with_answer, stream_with_answer).

The Client wires options into a :class:`Loop`, owns the conversation store round trips
(``ask`` saves after every run, a pending halt included; ``ask_with_answer`` saves only a
successful resume) and turns the loop's emitted events into an async iterator for
``stream``. With ``relay=False`` it never imports ``reference_py.relay``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .errors import ResumeError, ToolnexusError
from .execution import EventSink, WaitFor
from .hooks import Hooks
from .loop import Loop, LoopConfig
from .metrics import Metrics, MetricSink
from .providers import provider_for
from .resume import checked_inputs, repair_halted_turn
from .store import ConversationStore, InMemoryStore
from .suspension import NoExtension, SuspensionExtension
from .toolkit import Toolkit
from .types import Answer, Request, RunResult, Tool

if TYPE_CHECKING:
    from .loop import HTTPClient

Starter = Callable[[EventSink], Awaitable[RunResult]]
_Item = tuple[dict[str, Any], "asyncio.Future[None] | None"]


class _QueueSink(EventSink):
    """Feeds ``stream``: events go to a queue; ``deliver`` waits until the consumer has
    taken its event (it resolves when the consumer asks for the next one)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[_Item | None] = asyncio.Queue()

    def emit(self, event: dict[str, Any]) -> None:
        self.queue.put_nowait((event, None))

    async def deliver(self, event: dict[str, Any]) -> None:
        taken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((event, taken))
        await taken


def _tools_of(toolkit: Toolkit | None) -> list[Tool]:
    if toolkit is None:
        return []
    if not isinstance(toolkit, Toolkit):
        raise ToolnexusError(f"toolkit must be a Toolkit from create_toolkit, got {type(toolkit).__name__}")
    return list(toolkit.tools)


class Client:
    """A configured model client; build it with :func:`create_client`."""

    def __init__(self, config: LoopConfig, store: ConversationStore) -> None:
        self._loop = Loop(config)
        self._store = store

    @property
    def conversation_store(self) -> ConversationStore:
        return self._store

    @property
    def model(self) -> str:
        return self._loop.config.model

    def _opening(self, prompt: str | None, history: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        config = self._loop.config
        return config.provider.opening(history or [], config.system_prompt, prompt)

    async def _history(self, id: str | None) -> list[dict[str, Any]]:  # noqa: A002
        return (await self._store.get(id) or []) if id else []

    async def run(
        self, prompt: str, toolkit: Toolkit | None = None, history: list[dict[str, Any]] | None = None
    ) -> RunResult:
        tools = _tools_of(toolkit)
        return await self._loop.run(tools=tools, messages=self._opening(prompt, history), streaming=False, events=EventSink())

    async def ask(self, prompt: str, toolkit: Toolkit | None = None, id: str | None = None) -> RunResult:  # noqa: A002
        result = await self.run(prompt, toolkit, await self._history(id))
        if id:
            await self._store.save(id, result.messages)
        return result

    async def stream(
        self, prompt: str, toolkit: Toolkit | None = None, id: str | None = None  # noqa: A002
    ) -> AsyncIterator[dict[str, Any]]:
        tools = _tools_of(toolkit)
        history = await self._history(id)

        async def start(events: EventSink) -> RunResult:
            return await self._loop.run(tools=tools, messages=self._opening(prompt, history), streaming=True, events=events)

        async for event in self._events(start, id):
            yield event

    async def _resumed(
        self,
        toolkit: Toolkit | None,
        history: list[dict[str, Any]] | None,
        pending: Request | dict[str, Any],
        answer: Answer | dict[str, Any],
        streaming: bool,
        events: EventSink,
    ) -> RunResult:
        request, reply = checked_inputs(pending, answer)
        tools = _tools_of(toolkit)
        config = self._loop.config
        messages = await repair_halted_turn(
            history,
            request,
            reply,
            provider=config.provider,
            runner=self._loop.runner(tools, events),
            extension=config.extension,
        )
        return await self._loop.run(tools=tools, messages=messages, streaming=streaming, events=events)

    async def run_with_answer(
        self,
        toolkit: Toolkit | None = None,
        history: list[dict[str, Any]] | None = None,
        pending: Request | dict[str, Any] | None = None,
        answer: Answer | dict[str, Any] | None = None,
    ) -> RunResult:
        """Resume a durably halted run from its transcript with the host's Answer."""
        if pending is None or answer is None:
            raise ResumeError("cannot resume — run_with_answer needs both pending and answer")
        return await self._resumed(toolkit, history, pending, answer, False, EventSink())

    async def ask_with_answer(
        self,
        toolkit: Toolkit | None = None,
        id: str | None = None,  # noqa: A002
        pending: Request | dict[str, Any] | None = None,
        answer: Answer | dict[str, Any] | None = None,
    ) -> RunResult:
        """Resume the stored conversation ``id``; the resumed transcript is saved."""
        if not id:
            raise ResumeError("cannot resume — ask_with_answer needs a conversation id")
        result = await self.run_with_answer(toolkit, await self._store.get(id), pending, answer)
        await self._store.save(id, result.messages)
        return result

    async def stream_with_answer(
        self,
        toolkit: Toolkit | None = None,
        history: list[dict[str, Any]] | None = None,
        pending: Request | dict[str, Any] | None = None,
        answer: Answer | dict[str, Any] | None = None,
        id: str | None = None,  # noqa: A002
    ) -> AsyncIterator[dict[str, Any]]:
        """Streaming resume; with ``id`` the transcript comes from and returns to the store."""
        if pending is None or answer is None:
            raise ResumeError("cannot resume — stream_with_answer needs both pending and answer")
        if id:
            history = await self._store.get(id)

        async def start(events: EventSink) -> RunResult:
            return await self._resumed(toolkit, history, pending, answer, True, events)

        async for event in self._events(start, id):
            yield event

    async def _events(self, start: Starter, id: str | None) -> AsyncIterator[dict[str, Any]]:  # noqa: A002
        """Run ``start`` in a task and yield what it emits, then ``done`` (after saving)."""
        sink = _QueueSink()

        async def produce() -> RunResult:
            try:
                return await start(sink)
            finally:
                sink.queue.put_nowait(None)

        task = asyncio.create_task(produce())
        try:
            while (item := await sink.queue.get()) is not None:
                event, taken = item
                yield event
                if taken is not None and not taken.done():
                    taken.set_result(None)
            result = await task
            if id:
                await self._store.save(id, result.messages)
            yield {"type": "done", "result": result.to_wire()}
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


def _extension(relay: bool) -> SuspensionExtension:
    if not relay:
        return NoExtension()
    from .relay import RelayExtension  # imported only when relay is switched on

    return RelayExtension()


def create_client(
    *,
    base_url: str,
    style: str = "openai",
    model: str,
    api_key: str,
    max_turns: int = 10,
    wait_for: WaitFor | None = None,
    hooks: Any = None,
    on_metric: MetricSink | None = None,
    store: ConversationStore | None = None,
    system_prompt: str | None = None,
    relay: bool = True,
    http_client: HTTPClient | None = None,
) -> Client:
    """A Client for one provider style; ``wait_for`` may be sync or async. ``http_client``
    (an ``httpx.AsyncClient``, or the client installed through ``transport.use_client``) is shared by the client's runs;
    without it each run opens an httpx client of its own."""
    if not isinstance(base_url, str) or not base_url:
        raise ToolnexusError("create_client: base_url must be a non-empty string")
    if not isinstance(api_key, str):
        raise ToolnexusError("create_client: api_key must be a string")
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 0:
        raise ToolnexusError("create_client: max_turns must be a non-negative integer")
    config = LoopConfig(
        provider=provider_for(style),
        base_url=base_url,
        api_key=api_key,
        model=model,
        max_turns=max_turns,
        system_prompt=system_prompt or "",
        wait_for=wait_for,
        hooks=Hooks(hooks),
        metrics=Metrics(on_metric),
        extension=_extension(relay),
        http_client=http_client,
    )
    return Client(config, store if store is not None else InMemoryStore())
