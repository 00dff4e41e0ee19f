"""The reference shim: shim protocol v1 over stdio, driving ``reference_py``.

It only translates: protocol params -> reference_py calls, reference_py results -> the
protocol's neutral shapes. Every check lives in the harness. Run it as
``python shims/reference/shim.py [--no-relay]``; ``--no-relay`` builds clients with relay
support switched off (the reference's byte-identical-absent-relay baseline).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

# Runnable from a checkout without installation: the repo root holds reference_py.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import reference_py as tn  # noqa: E402
from reference_py.errors import ProviderError, ResumeError, ToolkitError, ToolnexusError  # noqa: E402

PROTOCOL_VERSION = 1
PORT_ERROR = -32001
VERSION_MISMATCH = -32003
# The port-error kinds of the protocol's error table, by the reference's exception types.
_ERROR_KINDS = ((ToolkitError, "toolkit"), (ResumeError, "resume"), (ProviderError, "provider"))
CAPABILITIES = ["openai", "anthropic", "stream", "store", "hooks", "relay", "resume", "concurrentWaitFor"]


class HostError(Exception):
    """The harness answered one of our host.* requests with an error (e.g. a waitFor that
    raises). Inside the port this is the host's own callback failing, so the run's outcome
    is the port's: reported as a port error, never passed through as a protocol error."""


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Channel:
    """Line-delimited JSON-RPC both ways: our responses and our requests to the host."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._next_id = 0
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._write_lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._write_lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        rid = f"s{self._next_id}"
        future: asyncio.Future[Any] = self._loop.create_future()
        self._waiting[rid] = future
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return await future

    def resolve(self, message: dict[str, Any]) -> None:
        future = self._waiting.pop(str(message.get("id")), None)
        if future is None or future.done():
            print(f"shim: response for unknown id {message.get('id')!r}", file=sys.stderr)
            return
        if "error" in message:
            future.set_exception(HostError(message["error"].get("message", "host error")))
        else:
            future.set_result(message.get("result"))


def native_tool(spec: dict[str, Any], executions: list[dict[str, Any]]) -> tn.Tool:
    """A native tool whose behaviour comes from the scenario's small vocabulary."""
    behaviour = spec["behaviour"]

    async def execute(args: dict[str, Any], ctx: tn.ToolContext) -> tn.ToolResult:
        executions.append(
            {"tool": spec["name"], "callId": ctx.call_id, "args": args, "answered": ctx.answer is not None}
        )
        if behaviour.get("delayMs"):
            await asyncio.sleep(behaviour["delayMs"] / 1000)
        if "reply" in behaviour:
            return tn.ToolResult(output=behaviour["reply"])
        if "fail" in behaviour:
            return tn.ToolResult(output=behaviour["fail"], is_error=True)
        if "alwaysSuspend" in behaviour:
            return _suspend(behaviour["alwaysSuspend"])
        if ctx.answer is None:
            return _suspend(behaviour["suspend"])
        then = behaviour["then"]
        if "reply" in then:
            return tn.ToolResult(output=then["reply"])
        output = (ctx.answer.data or {}).get("output")
        return tn.ToolResult(output=output if isinstance(output, str) else "")

    return tn.Tool(
        name=spec["name"],
        description=spec.get("description", ""),
        input_schema=spec.get("schema") or {"type": "object", "properties": {}, "additionalProperties": False},
        execute=execute,
        source="native",
    )


def _suspend(request: dict[str, Any]) -> tn.ToolResult:
    r = tn.Request.from_wire(request)
    return tn.pending(kind=r.kind, prompt=r.prompt, id=r.id, url=r.url, data=r.data, expiresAt=r.expiresAt)


class Shim:
    def __init__(self, loop: asyncio.AbstractEventLoop, relay: bool) -> None:
        self.channel = Channel(loop)
        self.relay = relay

    async def build_toolkit(self, spec: dict[str, Any], executions: list[dict[str, Any]]) -> Any:
        tools = []
        for tool in spec.get("tools", []):
            if tool.get("relay"):
                tools.append(tn.relay_tool(tool["name"], tool.get("description", ""), tool.get("schema")))
            else:
                tools.append(native_tool(tool, executions))
        return await tn.create_toolkit(builtins=bool(spec.get("builtins")), extra_tools=tools)

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("protocolVersion") != PROTOCOL_VERSION:
            raise RpcError(VERSION_MISMATCH, f"this shim speaks protocol {PROTOCOL_VERSION}")
        return {
            "protocolVersion": PROTOCOL_VERSION,
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
        client = tn.create_client(
            base_url=p["baseUrl"],
            style=p["style"],
            model=p["model"],
            api_key=p["apiKey"],
            max_turns=p.get("maxTurns", 10),
            system_prompt=p.get("systemPrompt"),
            wait_for=self._wait_for if p.get("waitFor") else None,
            hooks=self._hooks(p.get("hooks") or []),
            on_metric=metrics.append,
            store=_HostStore(self.channel) if p.get("store") else None,
            relay=self.relay,
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
            raise RpcError(-32602, f"unknown entry {entry!r}")
        if result is None:
            raise RpcError(PORT_ERROR, "stream ended without a done event", {"kind": "run"})
        return {"result": _result_wire(result), "events": events, "metrics": metrics, "executions": executions}

    async def _wait_for(self, request: tn.Request) -> tn.Answer:
        reply = await self.channel.request("host.waitFor", {"request": request.to_wire()})
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


class _HostStore:
    """ConversationStore forwarded to the harness, so transcripts survive a shim restart."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    async def get(self, id: str) -> list[Any] | None:  # noqa: A002
        reply = await self._channel.request("host.store.get", {"id": id})
        return reply.get("messages")

    async def save(self, id: str, messages: list[Any]) -> None:  # noqa: A002
        await self._channel.request("host.store.save", {"id": id, "messages": messages})


def _result_wire(result: Any) -> dict[str, Any]:
    return result.to_wire() if hasattr(result, "to_wire") else result


def _event_wire(event: dict[str, Any]) -> dict[str, Any]:
    return _jsonable(event)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_wire"):
        return value.to_wire()
    if isinstance(value, tn.ToolResult):
        return {"output": value.output, "isError": value.is_error}
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


async def serve(relay: bool) -> None:
    loop = asyncio.get_running_loop()
    shim = Shim(loop, relay)
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=pump, daemon=True).start()
    handlers = {
        "initialize": shim.initialize,
        "toolkit.describe": shim.describe,
        "client.run": shim.run,
    }
    tasks: dict[Any, asyncio.Task[None]] = {}
    while (line := await lines.get()) is not None:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            shim.channel.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if "method" not in message:
            shim.channel.resolve(message)
        elif message["method"] == "shutdown":
            shim.channel.send({"jsonrpc": "2.0", "id": message.get("id"), "result": {}})
            return
        elif message["method"] == "$/cancel":
            task = tasks.pop(message.get("params", {}).get("id"), None)
            if task:
                task.cancel()
        else:
            tasks[message.get("id")] = asyncio.create_task(_dispatch(shim, handlers, message))


async def _dispatch(shim: Shim, handlers: dict[str, Any], message: dict[str, Any]) -> None:
    rid = message.get("id")
    handler = handlers.get(message["method"])
    try:
        if handler is None:
            raise RpcError(-32601, f"method not found: {message['method']}")
        result = await handler(message.get("params") or {})
        shim.channel.send({"jsonrpc": "2.0", "id": rid, "result": result})
    except RpcError as exc:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        shim.channel.send({"jsonrpc": "2.0", "id": rid, "error": error})
    except HostError as exc:
        shim.channel.send(
            {"jsonrpc": "2.0", "id": rid, "error": {"code": PORT_ERROR, "message": f"host callback failed: {exc}", "data": {"kind": "run"}}}
        )
    except ToolnexusError as exc:
        kind = next((k for cls, k in _ERROR_KINDS if isinstance(exc, cls)), "run")
        shim.channel.send(
            {"jsonrpc": "2.0", "id": rid, "error": {"code": PORT_ERROR, "message": str(exc), "data": {"kind": kind}}}
        )
    except Exception as exc:  # a shim bug: report it, keep serving
        traceback.print_exc(file=sys.stderr)
        shim.channel.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": repr(exc)}})


if __name__ == "__main__":
    asyncio.run(serve(relay="--no-relay" not in sys.argv[1:]))
