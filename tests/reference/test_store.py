"""The conversation store: ask saves after every run (a halt included), ask_with_answer
loads, resumes and saves, and transcripts round-trip verbatim (also through JSON)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hostkit import Log, make_client, real_tool, toolkit
from scripted import (
    AB_SCHEMA,
    ARGS_BA,
    STYLES,
    assistant,
    body,
    declaration,
    fake_provider,
    final,
    relay_prompt,
    results,
    turn,
    user,
)

from reference_py import Answer, InMemoryStore, Request, ResumeError, relay_tool

rule = pytest.mark.rule


class JsonStore:
    """A store that keeps only JSON text, as a durable host would."""

    def __init__(self) -> None:
        self.saved: dict[str, str] = {}
        self.saves: list[str] = []

    async def get(self, id: str) -> list[dict[str, Any]] | None:  # noqa: A002
        raw = self.saved.get(id)
        return None if raw is None else json.loads(raw)

    async def save(self, id: str, messages: list[dict[str, Any]]) -> None:  # noqa: A002
        self.saves.append(id)
        self.saved[id] = json.dumps(messages)


def lookup() -> Any:
    return relay_tool("lookup", "client side", AB_SCHEMA)


def decls(style: str) -> list[dict[str, Any]]:
    return [declaration(style, "weather", "the weather tool", AB_SCHEMA),
            declaration(style, "lookup", "client side", AB_SCHEMA)]


SCRIPT = turn(calls=[("call_1", "weather", ARGS_BA), ("call_2", "lookup", '{"a": 3}')])


@rule("store.ask-saves-halt", "store.ask-with-answer-saves", "store.verbatim-round-trip",
      "resume.entry-points", "store.ask-loads-history")
@pytest.mark.parametrize("store_kind", ["memory", "json"])
@pytest.mark.parametrize("style", STYLES)
def test_store_round_trip(style: str, store_kind: str) -> None:
    store = InMemoryStore() if store_kind == "memory" else JsonStore()
    log = Log()

    async def go() -> tuple[Any, Any, Any, Any, Any, Any]:
        kit = await toolkit(real_tool(log, "weather", "sunny"), lookup())
        client = make_client(style, store=store)
        halted = await client.ask("go", toolkit=kit, id="conv-1")
        after_halt = await store.get("conv-1")
        resumed = await client.ask_with_answer(
            toolkit=kit, id="conv-1", pending=halted.pending,
            answer=Answer(id=halted.pending.id, ok=True,
                          data={"results": [{"id": "call_2", "output": "42", "isError": False}]}))
        after_resume = await store.get("conv-1")
        again = await client.ask("and now?", toolkit=kit, id="conv-1")
        return halted, after_halt, resumed, after_resume, again, await store.get("conv-1")

    with fake_provider(style, [SCRIPT, final("first"), final("second")]) as llm:
        halted, after_halt, resumed, after_resume, again, last = asyncio.run(go())
        bodies = llm.bodies
    halt_transcript = [user("go"), assistant(style, SCRIPT)] + results(
        style, [("call_1", "sunny", False), ("call_2", relay_prompt("lookup"), True)])
    assert halted.status == "pending"
    assert after_halt == halt_transcript, "ask saves the halted transcript"
    resumed_transcript = [user("go"), assistant(style, SCRIPT)] + results(
        style, [("call_1", "sunny", False), ("call_2", "42", False)])
    assert bodies[1] == body(style, resumed_transcript, decls(style))
    assert after_resume == resumed_transcript + [assistant(style, final("first"))]
    assert resumed.messages == after_resume
    # The stored pairs replay verbatim as history for the next ask.
    assert bodies[2] == body(style, after_resume + [user("and now?")], decls(style))
    assert last == after_resume + [user("and now?"), assistant(style, final("second"))]
    assert again.text == "second"


@rule("store.ask-saves-halt")
@pytest.mark.parametrize("style", STYLES)
def test_stream_with_id_saves_the_halt(style: str) -> None:
    store = JsonStore()

    async def go() -> list[dict[str, Any]]:
        kit = await toolkit(real_tool(Log(), "weather", "sunny"), lookup())
        return [e async for e in make_client(style, store=store).stream(
            "go", toolkit=kit, id="conv-s")]

    with fake_provider(style, [SCRIPT]):
        events = asyncio.run(go())
    assert json.loads(store.saved["conv-s"]) == events[-1]["result"]["messages"]
    assert events[-1]["result"]["status"] == "pending"


@rule("store.ask-with-answer-saves", "resume.needs-halted-turn")
@pytest.mark.parametrize("style", STYLES)
def test_ask_with_answer_on_unknown_conversation(style: str) -> None:
    async def go() -> None:
        kit = await toolkit(lookup())
        client = make_client(style, store=InMemoryStore())
        request = {"id": "r1", "kind": "tool_call", "prompt": relay_prompt("lookup"),
                   "data": {"calls": [{"id": "call_1", "name": "lookup", "input": {},
                                       "arguments": "{}"}]}}
        await client.ask_with_answer(toolkit=kit, id="nobody", pending=Request.from_wire(request),
                                     answer=Answer(id="r1", ok=True, data={"output": "x"}))

    with fake_provider(style, [final()]) as llm:
        with pytest.raises(ResumeError):
            asyncio.run(go())
        assert llm.call_count == 0


@rule("store.ask-with-answer-saves", "resume.may-halt-again")
@pytest.mark.parametrize("style", STYLES)
def test_resumed_run_that_halts_again_is_saved(style: str) -> None:
    store = JsonStore()
    second = turn(calls=[("call_9", "lookup", '{"a": 9}')])

    async def go() -> Any:
        kit = await toolkit(real_tool(Log(), "weather", "sunny"), lookup())
        client = make_client(style, store=store)
        halted = await client.ask("go", toolkit=kit, id="c")
        return await client.ask_with_answer(
            toolkit=kit, id="c", pending=halted.pending,
            answer=Answer(id=halted.pending.id, ok=True, data={"output": "42"}))

    with fake_provider(style, [SCRIPT, second]):
        again = asyncio.run(go())
    assert again.status == "pending"
    assert again.pending.data["calls"][0]["id"] == "call_9"
    assert json.loads(store.saved["c"]) == again.messages
    assert again.messages[-1:] == results(
        style, [("call_9", relay_prompt("lookup"), True)])


class CountingStore(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.touched: list[str] = []

    async def get(self, id: str) -> list[dict[str, Any]] | None:  # noqa: A002
        self.touched.append(f"get {id}")
        return await super().get(id)

    async def save(self, id: str, messages: list[dict[str, Any]]) -> None:  # noqa: A002
        self.touched.append(f"save {id}")
        await super().save(id, messages)


@rule("store.run-stateless")
@pytest.mark.parametrize("style", STYLES)
def test_stateless_entry_points_never_touch_the_store(style: str) -> None:
    store = CountingStore()

    async def go() -> None:
        kit = await toolkit(real_tool(Log(), "weather", "sunny"), lookup())
        client = make_client(style, store=store)
        halted = await client.run("go", toolkit=kit)
        await client.run_with_answer(toolkit=kit, history=halted.messages, pending=halted.pending,
                                     answer=Answer(id=halted.pending.id, ok=True,
                                                   data={"output": "42"}))
        async for _ in client.stream("again", toolkit=kit):
            pass

    with fake_provider(style, [SCRIPT, final(), final("streamed")]):
        asyncio.run(go())
    assert store.touched == []


@rule("store.ask-loads-history")
@pytest.mark.parametrize("style", STYLES)
def test_stream_with_id_continues_the_stored_conversation(style: str) -> None:
    store = InMemoryStore()
    earlier = [user("before"), assistant(style, final("earlier answer"))]

    async def go() -> None:
        await store.save("conv-h", earlier)
        async for _ in make_client(style, store=store).stream("next", id="conv-h"):
            pass

    with fake_provider(style, [final("now")]) as llm:
        asyncio.run(go())
        bodies = llm.bodies
    assert bodies == [body(style, earlier + [user("next")], stream=True)]
    stored = asyncio.run(store.get("conv-h"))
    assert stored == earlier + [user("next"), assistant(style, final("now"))]
