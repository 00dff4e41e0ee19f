"""The python port's shim: shim protocol v1 over stdio, driving PyPI ``toolnexus`` (pinned
in ``requirements.txt``; the build step installs it into a private venv and starts this
file with that venv's interpreter).

It only translates protocol params -> toolnexus calls and toolnexus results -> the
protocol's shapes (``neutral.py``); the stdio JSON-RPC plumbing is ``shims/pyshim_rpc.py``
and every judgement lives in the harness. The port has no relay tools and no
``run_with_answer`` / ``ask_with_answer`` (0.21.0), so ``relay`` and ``resume`` are not
declared and a call needing them answers -32002. ``register`` (protocol v1.1) is the
port's ``Toolkit.register``.

Call ids of native-tool executions: the port's ``ToolContext`` carries no call id, so the
shim learns it from a ``before_tool`` hook it always installs (the hook returns nothing,
which the port treats as "no override") and from the Request a suspension produced, and
hands it to the tool through a context variable of the asyncio task running that call.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib.metadata
import sys
from pathlib import Path
from typing import Any

import neutral
import toolnexus as tn

# The shared plumbing sits in the shims folder, beside this shim's own.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyshim_rpc as rpc  # noqa: E402
from pyshim_rpc import RpcError  # noqa: E402

CAPABILITIES = ["openai", "anthropic", "stream", "store", "hooks", "register", "resultMetadata"]
LIBRARY = {"name": "toolnexus", "version": importlib.metadata.version("toolnexus")}
# The model's call id for the tool execution about to start in this task (see module doc).
CURRENT_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_call", default=None)


def unsupported(capability: str, what: str) -> RpcError:
    return RpcError(rpc.UNSUPPORTED, f"toolnexus {LIBRARY['version']} has no {what}", {"capability": capability})


class Run:
    """One ``client.run`` call: its toolkit, client callbacks and recorded observations."""

    def __init__(self, channel: rpc.Channel | None, params: dict[str, Any]) -> None:
        self.channel = channel
        self.params = params
        self.executions: list[dict[str, Any]] = []
        self.metrics: list[dict[str, Any]] = []
        self.call_of_request: dict[str, str] = {}
        # A stream's waitFor tells the host whether the consumer got the pending event first.
        self.sightings = rpc.PendingSightings() if params.get("entry") == "stream" else None

    # -- toolkit ---------------------------------------------------------------------------

    def native_tool(self, spec: dict[str, Any]) -> tn.Tool:
        behaviour = spec["behaviour"]
        name = spec["name"]

        async def execute(args: dict[str, Any], ctx: tn.ToolContext | None = None) -> tn.ToolResult:
            call_id = CURRENT_CALL.get() or ""  # read before the first await: it is this call's
            answer = ctx.answer if ctx is not None else None
            self.executions.append(rpc.execution(name, call_id, args, answer is not None))
            outcome = await rpc.perform(behaviour, answer)
            if outcome.suspend is not None:
                return self.suspend(outcome.suspend, call_id)
            return tn.ToolResult(output=outcome.output, is_error=outcome.is_error, metadata=outcome.metadata)

        return tn.Tool(
            name=name,
            description=spec.get("description", ""),
            input_schema=spec.get("schema") or rpc.no_arguments_schema(),
            source="native",
            execute=execute,
        )

    def suspend(self, wire: dict[str, Any], call_id: str | None) -> tn.ToolResult:
        request = neutral.request_from_wire(wire)
        if call_id:
            self.call_of_request[request.id] = call_id
        return tn.pending(
            kind=request.kind, prompt=request.prompt, id=request.id,
            url=request.url, data=request.data, expiresAt=request.expiresAt,
        )

    async def toolkit(self) -> Any:
        spec = self.params["toolkit"]
        return await build_toolkit(spec, self.native_tool)

    # -- client callbacks ------------------------------------------------------------------

    async def wait_for(self, request: tn.Request) -> tn.Answer:
        params: dict[str, Any] = {"request": neutral.request_wire(request)}
        if self.sightings is not None:
            params["pendingEventSeen"] = await self.sightings.seen(request.id)
        reply = await self.channel.request("host.waitFor", params)
        # The port re-executes the tool right after this returns, in this task.
        CURRENT_CALL.set(self.call_of_request.get(request.id))
        return neutral.answer_from_wire(reply["answer"])

    def hooks(self) -> dict[str, Any]:
        wanted = set(self.params.get("hooks") or [])

        async def before_tool(event: dict[str, Any]) -> dict[str, Any] | None:
            override = None
            if "beforeTool" in wanted:
                neutral_event = {"name": event["name"], "args": event["args"], "callId": event.get("id")}
                reply = await self.channel.request("host.hook", {"name": "beforeTool", "event": neutral_event})
                override = (reply or {}).get("override")
            CURRENT_CALL.set(event.get("id"))  # no await between here and the tool's start
            if not override:
                return None
            if "suspend" in override:
                return {"result": self.suspend(override["suspend"], event.get("id"))}
            return {"args": override["args"]}

        hooks: dict[str, Any] = {"before_tool": before_tool}
        if "afterTool" in wanted:

            async def after_tool(event: dict[str, Any]) -> None:
                neutral_event = {
                    "name": event["name"],
                    "args": event["args"],
                    "callId": event.get("id"),
                    "result": neutral.tool_result(event["result"]),
                }
                await self.channel.request("host.hook", {"name": "afterTool", "event": neutral_event})

            hooks["after_tool"] = after_tool
        return hooks

    # -- the entry point -------------------------------------------------------------------

    async def execute(self) -> dict[str, Any]:
        p = self.params
        entry = p["entry"]
        if entry in {"runWithAnswer", "askWithAnswer"}:
            raise unsupported("resume", f"{entry} (no run_with_answer/ask_with_answer)")
        toolkit = await self.toolkit()
        client = tn.create_client(
            base_url=p["baseUrl"],
            style=p["style"],
            model=p["model"],
            api_key=p["apiKey"],
            max_turns=p.get("maxTurns", 10),
            system_prompt=p.get("systemPrompt"),
            retries=0,
            on_error=lambda info: "fail",
            wait_for=self.wait_for if p.get("waitFor") else None,
            hooks=self.hooks(),
            on_metric=lambda event: self.metrics.append(neutral.metric(event)),
            store=rpc.HostStore(self.channel) if p.get("store") else None,
        )
        events: list[dict[str, Any]] = []
        if entry == "run":
            result = await client.run(p["prompt"], toolkit, history=p.get("history"))
        elif entry == "ask":
            result = await client.ask(p["prompt"], toolkit, id=p.get("id"))
        elif entry == "stream":
            result = None
            async for event in client.stream(p["prompt"], toolkit, id=p.get("id")):
                events.append(neutral.stream_event(event))
                if self.sightings is not None:
                    self.sightings.saw(events[-1])
                if event.get("type") == "done":
                    result = event["result"]
            if result is None:
                raise rpc.port_error("the stream ended without a done event", "run")
        else:
            raise RpcError(rpc.INVALID_PARAMS, f"unknown entry {entry!r}")
        return {
            "result": neutral.run_result(result),
            "events": events,
            "metrics": self.metrics,
            "executions": self.executions,
        }


async def build_toolkit(spec: dict[str, Any], native: Any) -> Any:
    """The port's toolkit from ``tools``, then (protocol v1.1) ``register`` added in one
    ``Toolkit.register`` call; whatever the port raises on the way is a ``toolkit`` error."""
    tools, registered = port_tools(spec.get("tools", []), native), port_tools(spec.get("register", []), native)
    try:
        toolkit = await tn.create_toolkit(builtins=bool(spec.get("builtins")), extra_tools=tools)
        return toolkit.register(*registered) if registered else toolkit
    except Exception as exc:
        raise rpc.port_error(f"{type(exc).__name__}: {exc}", "toolkit") from exc


def port_tools(specs: list[dict[str, Any]], native: Any) -> list[Any]:
    for tool in specs:
        if tool.get("relay"):
            # The harness never sends relay tools to a port without the capability; be loud if it does.
            raise unsupported("relay", f"relay tools (asked to declare {tool['name']!r})")
    return [native(tool) for tool in specs]


async def initialize(params: dict[str, Any]) -> dict[str, Any]:
    rpc.require_protocol(params)
    return {
        "protocolVersion": rpc.PROTOCOL_VERSION,
        "port": "python",
        "language": "python",
        "library": LIBRARY,
        "capabilities": CAPABILITIES,
    }


async def describe(params: dict[str, Any]) -> dict[str, Any]:
    toolkit = await build_toolkit(params["toolkit"], Run(None, {}).native_tool)  # declared, never executed
    return {"openai": toolkit.to_openai(), "anthropic": toolkit.to_anthropic(), "gemini": toolkit.to_gemini()}


def port_error_kind(exc: Exception) -> str:
    """Any exception out of a run is the port's: a provider error, else a run error. Releases
    before the typed ``ProviderError`` (0.19.0) raise a provider's failure as "LLM <status>: ..."."""
    from toolnexus import client

    provider_error = getattr(client, "ProviderError", None)
    if provider_error is not None:
        return "provider" if isinstance(exc, provider_error) else "run"
    return "provider" if str(exc).startswith("LLM ") else "run"


async def serve() -> None:
    channel = rpc.Channel(id_prefix="py-", name="python shim")

    async def run(params: dict[str, Any]) -> dict[str, Any]:
        return await Run(channel, params).execute()

    handlers: dict[str, rpc.Handler] = {"initialize": initialize, "toolkit.describe": describe, "client.run": run}
    await rpc.serve(channel, lambda message: rpc.dispatch(channel, handlers, message, port_error_kind))


if __name__ == "__main__":
    asyncio.run(serve())
