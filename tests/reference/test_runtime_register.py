"""Runtime registration in the reference (``Toolkit.register``, protocol v1.1 ``register``):
registered tools come after the toolkit's own, the first tool of a name wins, and the relay
collision guard holds as at construction."""

from __future__ import annotations

import asyncio

import pytest
from hostkit import Log, real_tool, toolkit

from reference_py import ToolContext, ToolkitError, relay_tool

rule = pytest.mark.rule


@rule("decl.runtime-register")
def test_registered_tools_follow_and_never_replace() -> None:
    log = Log()
    kit = asyncio.run(toolkit(real_tool(log, "alpha", "first alpha"), builtins=True))
    before = [t.name for t in kit.tools]
    returned = kit.register(real_tool(log, "bash", "mine"), real_tool(log, "alpha", "second alpha"), real_tool(log, "omega", "o"))
    assert returned is kit
    assert [t.name for t in kit.tools] == [*before, "omega"]
    assert kit.get("bash").source == "builtin", "a registered tool never shadows a builtin"
    result = asyncio.run(kit.get("alpha").execute({}, ToolContext(call_id="c1", tool_name="alpha")))
    assert result.output == "first alpha"


@rule("relay.collision-guard-register")
@pytest.mark.parametrize("builtins", [False, True])
def test_registering_a_relay_tool_named_like_a_builtin_is_refused(builtins: bool) -> None:
    kit = asyncio.run(toolkit(builtins=builtins))
    before = [t.name for t in kit.tools]
    with pytest.raises(ToolkitError, match=r"\[read\]"):
        kit.register(relay_tool("fine", "d", {"type": "object"}), relay_tool("read", "d", {"type": "object"}))
    assert [t.name for t in kit.tools] == before, "a refused registration adds nothing"
