"""The reference shim: shim protocol v1 over stdio, driving ``reference_py``.

It only translates: protocol params -> reference_py calls, reference_py results -> the
protocol's neutral shapes; the stdio JSON-RPC plumbing is ``shims/pyshim_rpc.py``. Every
check lives in the harness. Run it as ``python shims/reference/shim.py [--no-relay]``;
``--no-relay`` builds clients with relay support switched off (the reference's
byte-identical-absent-relay baseline).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

# Runnable from a checkout without installation: the repo root holds reference_py, the
# shims folder the shared plumbing.
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parent))

import pyshim_rpc as rpc  # noqa: E402
from pyshim_rpc import HostError  # noqa: E402,F401 - the mutant catalogue catches shim.HostError

import reference_py as tn  # noqa: E402
from reference_py.errors import ProviderError, ResumeError, ToolkitError, ToolnexusError  # noqa: E402

# The port-error kinds of the protocol's error table, by the reference's exception types.
_ERROR_KINDS = ((ToolkitError, "toolkit"), (ResumeError, "resume"), (ProviderError, "provider"))
CAPABILITIES = ["openai", "anthropic", "stream", "store", "hooks", "relay", "resume", "concurrentWaitFor", "register", "resultMetadata"]


def native_tool(spec: dict[str, Any], executions: list[dict[str, Any]]) -> tn.Tool:
    """A native tool whose behaviour comes from the scenario's small vocabulary."""
    behaviour = spec["behaviour"]

    async def execute(args: dict[str, Any], ctx: tn.ToolContext) -> tn.ToolResult:
        executions.append(rpc.execution(spec["name"], ctx.call_id, args, ctx.answer is not None))
        outcome = await rpc.perform(behaviour, ctx.answer)
        if outcome.suspend is not None:
            return _suspend(outcome.suspend)
        return tn.ToolResult(output=outcome.output, is_error=outcome.is_error, metadata=outcome.metadata)

    return tn.Tool(
        name=spec["name"],
        description=spec.get("description", ""),
        input_schema=spec.get("schema") or rpc.no_arguments_schema(),
        execute=execute,
        source="native",
    )


def _suspend(request: dict[str, Any]) -> tn.ToolResult:
    r = tn.Request.from_wire(request)
    return tn.pending(kind=r.kind, prompt=r.prompt, id=r.id, url=r.url, data=r.data, expiresAt=r.expiresAt)


class Shim:
    def __init__(self, channel: rpc.Channel, relay: bool) -> None:
        self.channel = channel
        self.relay = relay
        # One HTTP client for the shim's life, shared by every run so runs reuse keep-alive
        # connections to the provider: reference_py's own (httpx).
        self.http: Any = tn.new_http_client()

    async def build_toolkit(self, spec: dict[str, Any], executions: list[dict[str, Any]]) -> Any:
        def build(tool: dict[str, Any]) -> Any:
            if tool.get("relay"):
                return tn.relay_tool(tool["name"], tool.get("description", ""), tool.get("schema"))
            return native_tool(tool, executions)

        toolkit = await tn.create_toolkit(
            builtins=bool(spec.get("builtins")), extra_tools=[build(t) for t in spec.get("tools", [])]
        )
        if spec.get("register"):  # protocol v1.1 capability "register"
            toolkit.register(*(build(t) for t in spec["register"]))
        return toolkit

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        rpc.require_protocol(params)
        return {
            "protocolVersion": rpc.PROTOCOL_VERSION,
            "port": "reference" if self.relay else "reference-norelay",
            "language": "python",
            "library": {"name": "reference_py", "version": getattr(tn, "__version__", "0")},
            "capabilities": CAPABILITIES if self.relay else [c for c in CAPABILITIES if c not in {"relay"}],
        }

    async def describe(self, params: dict[str, Any]) -> dict[str, Any]:
        toolkit = await self.build_toolkit(params["toolkit"], [])
        return {"openai": toolkit.to_openai(), "anthropic": toolkit.to_anthropic(), "gemini": toolkit.to_gemini()}

    async def run(self, p: dict[str, Any]) -> dict[str, Any]:
        executions: list[dict[str, Any]] = []
        metrics: list[dict[str, Any]] = []
        toolkit = await self.build_toolkit(p["toolkit"], executions)
        # A stream's waitFor tells the host whether the consumer got the pending event first.
        sightings = rpc.PendingSightings() if p["entry"] == "stream" else None
        client = tn.create_client(
            base_url=p["baseUrl"],
            style=p["style"],
            model=p["model"],
            api_key=p["apiKey"],
            max_turns=p.get("maxTurns", 10),
            system_prompt=p.get("systemPrompt"),
            wait_for=(lambda request: self._wait_for(request, sightings)) if p.get("waitFor") else None,
            hooks=self._hooks(p.get("hooks") or []),
            on_metric=metrics.append,
            store=_HostStore(self.channel) if p.get("store") else None,
            relay=self.relay,
            http_client=self.http,
        )
        entry = p["entry"]
        events: list[dict[str, Any]] = []
        if entry == "run":
            result = await client.run(p["prompt"], toolkit=toolkit, history=p.get("history"))
        elif entry == "ask":
            result = await client.ask(p["prompt"], toolkit=toolkit, id=p["id"])
        elif entry == "stream":
            result = None
            async for event in client.stream(p["prompt"], toolkit=toolkit, id=p.get("id")):
                events.append(_event_wire(event))
                if sightings is not None:
                    sightings.saw(events[-1])
                if event["type"] == "done":
                    result = event["result"]
        elif entry == "runWithAnswer":
            result = await client.run_with_answer(
                toolkit=toolkit,
                history=p["history"],
                pending=tn.Request.from_wire(p["pending"]),
                answer=tn.Answer.from_wire(p["answer"]),
            )
        elif entry == "askWithAnswer":
            result = await client.ask_with_answer(
                toolkit=toolkit,
                id=p["id"],
                pending=tn.Request.from_wire(p["pending"]),
                answer=tn.Answer.from_wire(p["answer"]),
            )
        else:
            raise rpc.RpcError(rpc.INVALID_PARAMS, f"unknown entry {entry!r}")
        if result is None:
            raise rpc.port_error("stream ended without a done event", "run")
        return {"result": _result_wire(result), "events": events, "metrics": metrics, "executions": executions}

    async def _wait_for(self, request: tn.Request, sightings: rpc.PendingSightings | None) -> tn.Answer:
        params: dict[str, Any] = {"request": request.to_wire()}
        if sightings is not None:
            params["pendingEventSeen"] = await sightings.seen(request.id)
        reply = await self.channel.request("host.waitFor", params)
        return tn.Answer.from_wire(reply["answer"])

    def _hooks(self, names: list[str]) -> dict[str, Any] | None:
        if not names:
            return None
        hooks: dict[str, Any] = {}
        if "beforeTool" in names:

            async def before_tool(event: dict[str, Any]) -> dict[str, Any] | None:
                reply = await self.channel.request(
                    "host.hook", {"name": "beforeTool", "event": _jsonable(event)}
                )
                override = (reply or {}).get("override")
                if not override:
                    return None
                if "args" in override:
                    return {"args": override["args"]}
                return {"result": _suspend(override["suspend"])}

            hooks["before_tool"] = before_tool
        if "afterTool" in names:

            async def after_tool(event: dict[str, Any]) -> None:
                await self.channel.request("host.hook", {"name": "afterTool", "event": _jsonable(event)})

            hooks["after_tool"] = after_tool
        return hooks


class _HostStore(rpc.HostStore):
    """reference_py's ConversationStore, kept by the harness (its own class, so a mutant can
    patch this shim's store alone)."""


def _result_wire(result: Any) -> dict[str, Any]:
    return result.to_wire() if hasattr(result, "to_wire") else result


def _event_wire(event: dict[str, Any]) -> dict[str, Any]:
    return _jsonable(event)


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    kind = type(value)
    # Exact types first: an event is mostly plain values, and this runs for each of them.
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {k: _jsonable(v) for k, v in value.items()}
    if hasattr(value, "to_wire"):
        return value.to_wire()
    if isinstance(value, tn.ToolResult):
        return {"output": value.output, "isError": value.is_error}
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _port_error_kind(exc: Exception) -> str | None:
    """The protocol's kind for a reference_py error; None for anything else (a shim bug)."""
    if not isinstance(exc, ToolnexusError):
        return None
    return next((kind for cls, kind in _ERROR_KINDS if isinstance(exc, cls)), "run")


async def serve(relay: bool) -> None:
    shim = Shim(rpc.Channel(id_prefix="s", name="reference shim"), relay)
    handlers: dict[str, rpc.Handler] = {
        "initialize": shim.initialize,
        "toolkit.describe": shim.describe,
        "client.run": shim.run,
    }
    # _dispatch is looked up per request: the plugin tests' broken shim replaces it.
    try:
        await rpc.serve(shim.channel, lambda message: _dispatch(shim, handlers, message))
    finally:
        await shim.http.aclose()


async def _dispatch(shim: Shim, handlers: dict[str, rpc.Handler], message: dict[str, Any]) -> None:
    await rpc.dispatch(shim.channel, handlers, message, _port_error_kind)


def main() -> None:
    asyncio.run(serve(relay="--no-relay" not in sys.argv[1:]))


if __name__ == "__main__":
    main()
