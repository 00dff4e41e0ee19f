"""The durable host's side of §10 besides runWithAnswer: running again with the halted
transcript, the builtin question tool, generated Request ids, and results whose metadata
holds no Request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hostkit import PATHS, Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import ARGS_BA, STYLES, assistant, fake_provider, final, results, turn, user

from reference_py import Answer, Request, ToolContext, ToolResult, define_tool

rule = pytest.mark.rule

HALT = turn(calls=[("c1", "real1", ARGS_BA), ("c2", "signin", ARGS_BA)])
AGAIN = turn(calls=[("c3", "signin", ARGS_BA)])


@rule("resume.rerun-with-transcript")
@pytest.mark.parametrize("style", STYLES)
def test_running_again_replays_the_halted_transcript_and_runs_the_tool_only_when_called(style: str) -> None:
    log = Log()

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        client = make_client(style)
        kit = await toolkit(real_tool(log, "real1", "real-out"), suspending_tool(log, "signin", "auth-1", "Sign in"))
        halted = (await client.run("go", toolkit=kit)).to_wire()
        ran_before = len(log.executions)
        again = (await client.run("signed in", toolkit=kit, history=halted["messages"])).to_wire()
        assert len(log.executions) == ran_before + 1, "only the model's new call runs the tool again"
        return halted, again

    with fake_provider(style, [HALT, AGAIN]) as llm:
        halted, again = asyncio.run(go())
    transcript = [user("go"), assistant(style, HALT), *results(style, [("c1", "real-out", False), ("c2", "Sign in", True)])]
    assert halted["messages"] == transcript
    assert llm.bodies[1]["messages"] == [*transcript, user("signed in")]
    assert again["status"] == "pending", "the halted tool, called again, suspends again"
    assert log.executions[-1][0] == "signin" and log.executions[-1][2] is None


QUESTIONS = [{"question": "Which city?", "header": "City", "options": ["Oslo", "Bergen"]}, {"question": "Which unit?"}]
ASK = turn(calls=[("q1", "question", json.dumps({"questions": QUESTIONS}))])


@rule("susp.question-kind", "susp.question-output-format")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_the_question_builtin_asks_kind_question_and_answers_with_the_json_of_answer_data(style: str, path: str) -> None:
    asked: list[Request] = []

    def wait_for(request: Request) -> Answer:
        asked.append(request)
        return Answer(id=request.id, ok=True, data={"answers": ["Oslo", "Celsius"]})

    async def go() -> Any:
        client = make_client(style, wait_for=wait_for)
        return await drive(client, path, "plan", await toolkit(builtins=True))

    with fake_provider(style, [ASK, final()]) as llm:
        asyncio.run(go())
    [request] = asked
    assert request.kind == "question"
    assert request.data == {"questions": QUESTIONS}
    assert request.prompt == "Which city? (options: Oslo, Bergen)\nWhich unit?"
    content = results(style, [("q1", '{"answers":["Oslo","Celsius"]}', False)])
    assert llm.bodies[1]["messages"][-len(content):] == content


@rule("susp.request-id-unique")
@pytest.mark.parametrize("style", STYLES)
def test_generated_request_ids_differ_between_suspensions(style: str) -> None:
    two = turn(calls=[("q1", "question", json.dumps({"questions": QUESTIONS})),
                      ("q2", "question", json.dumps({"questions": [{"question": "Anything else?"}]}))])
    asked: list[Request] = []

    def wait_for(request: Request) -> Answer:
        asked.append(request)
        return Answer(id=request.id, ok=True, data={})

    async def go() -> None:
        client = make_client(style, wait_for=wait_for)
        await client.run("plan", toolkit=await toolkit(builtins=True))

    with fake_provider(style, [two, final()]):
        asyncio.run(go())
    ids = [r.id for r in asked]
    assert len(ids) == 2 and len(set(ids)) == 2 and all(ids), ids


def tool_with_metadata(name: str, metadata: dict[str, Any]) -> Any:
    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(output=f"{name} done", metadata=metadata)

    return define_tool(name=name, description=f"the {name} tool", input_schema={"type": "object"}, execute=execute)


@rule("susp.pending-marker")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_metadata_without_a_request_leaves_a_result_ordinary(style: str, path: str) -> None:
    log = Log()
    three = turn(calls=[("m1", "cached", "{}"), ("m2", "nulled", "{}"), ("m3", "queued", "{}")])

    async def go() -> Any:
        client = make_client(style, on_metric=log.on_metric)
        kit = await toolkit(tool_with_metadata("cached", {"cache": "hit"}), tool_with_metadata("nulled", {"pending": None}),
                            tool_with_metadata("queued", {"pending": {"status": "queued"}}))
        return await drive(client, path, "go", kit)

    with fake_provider(style, [three, final()]) as llm:
        outcome = asyncio.run(go())
    assert outcome.result["status"] == "done"
    assert not any(e.get("pending") for e in log.tool_events())
    want = results(style, [("m1", "cached done", False), ("m2", "nulled done", False), ("m3", "queued done", False)])
    assert llm.bodies[1]["messages"][-len(want):] == want
