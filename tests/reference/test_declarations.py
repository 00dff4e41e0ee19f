"""Tool declarations (the three adapters), builtins, and the relay collision guard."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import Log, real_tool, toolkit
from scripted import AB_SCHEMA

from reference_py import (
    BUILTIN_NAMES,
    ToolkitError,
    create_toolkit,
    define_tool,
    relay_tool,
    to_anthropic,
    to_gemini,
    to_openai,
)

rule = pytest.mark.rule

BUILTINS = {"bash", "read", "write", "edit", "grep", "glob", "webfetch", "question",
            "apply_patch", "todowrite"}
LOOKUP_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}},
                                 "required": ["q"]}


def three_tools() -> list[Any]:
    log = Log()
    return [real_tool(log, "zeta", "z"), relay_tool("lookup", "Look it up", LOOKUP_SCHEMA),
            real_tool(log, "alpha", "a")]


@rule("decl.openai-shape", "decl.order", "relay.declared-like-any-tool")
def test_openai_declarations() -> None:
    kit = asyncio.run(toolkit(*three_tools()))
    assert kit.to_openai() == [
        {"type": "function", "function": {"name": "zeta", "description": "the zeta tool",
                                          "parameters": AB_SCHEMA}},
        {"type": "function", "function": {"name": "lookup", "description": "Look it up",
                                          "parameters": LOOKUP_SCHEMA}},
        {"type": "function", "function": {"name": "alpha", "description": "the alpha tool",
                                          "parameters": AB_SCHEMA}},
    ]


@rule("decl.anthropic-shape", "decl.order", "relay.declared-like-any-tool")
def test_anthropic_declarations() -> None:
    kit = asyncio.run(toolkit(*three_tools()))
    assert kit.to_anthropic() == [
        {"name": "zeta", "description": "the zeta tool", "input_schema": AB_SCHEMA},
        {"name": "lookup", "description": "Look it up", "input_schema": LOOKUP_SCHEMA},
        {"name": "alpha", "description": "the alpha tool", "input_schema": AB_SCHEMA},
    ]


@rule("decl.gemini-shape", "decl.order", "relay.declared-like-any-tool")
def test_gemini_declarations() -> None:
    kit = asyncio.run(toolkit(*three_tools()))
    assert kit.to_gemini() == [{"functionDeclarations": [
        {"name": "zeta", "description": "the zeta tool", "parameters": AB_SCHEMA},
        {"name": "lookup", "description": "Look it up", "parameters": LOOKUP_SCHEMA},
        {"name": "alpha", "description": "the alpha tool", "parameters": AB_SCHEMA},
    ]}]


@rule("relay.declared-like-any-tool", "relay.not-a-tool-error")
def test_relay_tool_is_a_tool_with_source_relay() -> None:
    tool = relay_tool("lookup", "Look it up", LOOKUP_SCHEMA)
    assert (tool.name, tool.description, tool.input_schema, tool.source) == (
        "lookup", "Look it up", LOOKUP_SCHEMA, "relay")


@rule("decl.builtin-names")
def test_builtins_declared_under_real_names() -> None:
    assert set(BUILTIN_NAMES) == BUILTINS
    kit = asyncio.run(create_toolkit(builtins=True))
    names = [t.name for t in kit.tools]
    assert sorted(names) == sorted(BUILTINS)
    for tool in kit.tools:
        assert tool.source == "builtin", tool.name
        assert tool.input_schema.get("type") == "object", tool.name
        assert isinstance(tool.input_schema.get("properties"), dict), tool.name
    declared = {d["function"]["name"]: d["function"]["parameters"] for d in kit.to_openai()}
    assert declared == {t.name: t.input_schema for t in kit.tools}


@rule("decl.builtin-names", "decl.order")
def test_no_builtins_when_off() -> None:
    kit = asyncio.run(create_toolkit(builtins=False))
    assert list(kit.tools) == []
    assert kit.to_openai() == [] and kit.to_anthropic() == []


@rule("decl.order")
def test_extras_follow_builtins_in_insertion_order() -> None:
    log = Log()
    kit = asyncio.run(toolkit(real_tool(log, "zeta", "z"), real_tool(log, "alpha", "a"),
                              builtins=True))
    names = [t.name for t in kit.tools]
    assert names[-2:] == ["zeta", "alpha"]
    assert set(names[:-2]) == BUILTINS


@rule("relay.collision-guard")
@pytest.mark.parametrize("builtins", [True, False])
@pytest.mark.parametrize("name", ["bash", "question", "apply_patch"])
def test_relay_tool_named_like_a_builtin_is_refused(builtins: bool, name: str) -> None:
    with pytest.raises(ToolkitError) as caught:
        asyncio.run(create_toolkit(builtins=builtins,
                                   extra_tools=[relay_tool(name, "client side", LOOKUP_SCHEMA)]))
    message = str(caught.value)
    assert name in message
    assert "\n" not in message.strip(), "the refusal is one clear line"


@rule("relay.collision-guard")
def test_guard_ignores_non_colliding_relay_tools() -> None:
    kit = asyncio.run(create_toolkit(builtins=True, extra_tools=[
        relay_tool("lookup", "Look it up", LOOKUP_SCHEMA)]))
    assert [t.name for t in kit.tools].count("lookup") == 1


@rule("relay.non-relay-may-shadow")
@pytest.mark.parametrize("builtins", [True, False])
def test_non_relay_tool_may_shadow_a_builtin(builtins: bool) -> None:
    async def mine(args: dict[str, Any], ctx: Any) -> str:
        return "mine"

    shadow = define_tool(name="bash", description="my bash", input_schema=AB_SCHEMA, execute=mine)
    kit = asyncio.run(create_toolkit(builtins=builtins, extra_tools=[shadow]))
    bashes = [t for t in kit.tools if t.name == "bash"]
    assert len(bashes) == 1
    assert bashes[0].description == "my bash"
    assert bashes[0].source != "builtin"


@rule("decl.openai-shape", "decl.anthropic-shape", "decl.gemini-shape")
def test_module_level_adapters_match_toolkit_methods() -> None:
    kit = asyncio.run(toolkit(*three_tools()))
    assert to_openai(kit.tools) == kit.to_openai()
    assert to_anthropic(kit.tools) == kit.to_anthropic()
    assert to_gemini(kit.tools) == kit.to_gemini()
