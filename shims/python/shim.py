"""The python port's shim: shim protocol v1 over stdio, driving PyPI ``toolnexus`` (pinned
in ``requirements.txt``; the build step installs it into a private venv and starts this
file with that venv's interpreter).

It only translates protocol params -> toolnexus calls and toolnexus results -> the
protocol's shapes (``neutral.py``); every judgement lives in the harness. The port has no
relay tools and no ``run_with_answer`` / ``ask_with_answer`` (0.21.0), so ``relay`` and
``resume`` are not declared and a call needing them answers -32002.

Call ids of native-tool executions: the port's ``ToolContext`` carries no call id, so the
shim learns it from a ``before_tool`` hook it always installs (the hook returns nothing,
which the port treats as "no override") and from the Request a suspension produced, and
hands it to the tool through a context variable of the asyncio task running that call.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib.metadata
import json
import sys
import threading
import traceback
from typing import Any

import toolnexus as tn

import neutral

PROTOCOL_VERSION = 1
PORT_ERROR, UNSUPPORTED, VERSION_MISMATCH = -32001, -32002, -32003
CAPABILITIES = ["openai", "anthropic", "stream", "store", "hooks"]
LIBRARY = {"name": "toolnexus", "version": importlib.metadata.version("toolnexus")}
# The model's call id for the tool execution about to start in this task (see module doc).
CURRENT_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_call", default=None)


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class HostError(Exception):
    """The host answered one of our host.* requests with an error (e.g. its waitFor raised)."""


def unsupported(capability: str, what: str) -> RpcError:
    return RpcError(UNSUPPORTED, f"toolnexus {LIBRARY['version']} has no {what}", {"capability": capability})


class Channel:
    """Line-delimited JSON-RPC: our responses, and our own requests to the host by id."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._ids = 0
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self._ids += 1
        rid = f"py-{self._ids}"
        future: asyncio.Future[Any] = self._loop.create_future()
        self._waiting[rid] = future
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return await future

    def resolve(self, message: dict[str, Any]) -> None:
        future = self._waiting.pop(str(message.get("id")), None)
        if future is None or future.done():
            print(f"python shim: response to unknown id {message.get('id')!r}", file=sys.stderr)
        elif "error" in message:
            error = message["error"] or {}
            future.set_exception(HostError(f"host error {error.get('code')}: {error.get('message', '')}"))
        else:
            future.set_result(message.get("result"))


class Run:
    """One ``client.run`` call: its toolkit, client callbacks and recorded observations."""

    def __init__(self, channel: Channel | None, params: dict[str, Any]) -> None:
        self.channel = channel
        self.params = params
        self.executions: list[dict[str, Any]] = []
        self.metrics: list[dict[str, Any]] = []
        self.call_of_request: dict[str, str] = {}

    # -- toolkit ---------------------------------------------------------------------------

    def native_tool(self, spec: dict[str, Any]) -> tn.Tool:
        behaviour = spec["behaviour"]
        name = spec["name"]

        async def execute(args: dict[str, Any], ctx: tn.ToolContext | None = None) -> tn.ToolResult:
            call_id = CURRENT_CALL.get() or ""  # read before the first await: it is this call's
            answer = ctx.answer if ctx is not None else None
            self.executions.append({"tool": name, "callId": call_id, "args": args, "answered": answer is not None})
            if behaviour.get("delayMs"):
                await asyncio.sleep(behaviour["delayMs"] / 1000)
            if "reply" in behaviour:
                return tn.ToolResult(output=behaviour["reply"], is_error=False)
            if "fail" in behaviour:
                return tn.ToolResult(output=behaviour["fail"], is_error=True)
            if "alwaysSuspend" in behaviour:
                return self.suspend(behaviour["alwaysSuspend"], call_id)
            if answer is None:
                return self.suspend(behaviour["suspend"], call_id)
            then = behaviour["then"]
            if "reply" in then:
                return tn.ToolResult(output=then["reply"], is_error=False)
            output = (answer.data or {}).get("output")
            return tn.ToolResult(output=output if isinstance(output, str) else "", is_error=False)

        return tn.Tool(
            name=name,
            description=spec.get("description", ""),
            input_schema=spec.get("schema") or {"type": "object", "properties": {}, "additionalProperties": False},
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
        reply = await self.channel.request("host.waitFor", {"request": neutral.request_wire(request)})
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
            store=HostStore(self.channel) if p.get("store") else None,
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
                if event.get("type") == "done":
                    result = event["result"]
            if result is None:
                raise RpcError(PORT_ERROR, "the stream ended without a done event", {"kind": "run"})
        else:
            raise RpcError(-32602, f"unknown entry {entry!r}")
        return {
            "result": neutral.run_result(result),
            "events": events,
            "metrics": self.metrics,
            "executions": self.executions,
        }


async def build_toolkit(spec: dict[str, Any], native: Any) -> Any:
    tools = []
    for tool in spec.get("tools", []):
        if tool.get("relay"):
            # The harness never sends relay tools to a port without the capability; be loud if it does.
            raise unsupported("relay", f"relay tools (asked to declare {tool['name']!r})")
        tools.append(native(tool))
    return await tn.create_toolkit(builtins=bool(spec.get("builtins")), extra_tools=tools)


class HostStore:
    """The port's ConversationStore protocol, forwarded to the harness's host.store.*."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    async def get(self, id: str) -> list[dict[str, Any]] | None:  # noqa: A002 - the port's parameter name
        reply = await self._channel.request("host.store.get", {"id": id})
        return (reply or {}).get("messages")

    async def save(self, id: str, messages: list[dict[str, Any]]) -> None:  # noqa: A002
        await self._channel.request("host.store.save", {"id": id, "messages": messages})


async def initialize(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("protocolVersion") != PROTOCOL_VERSION:
        raise RpcError(VERSION_MISMATCH, f"this shim speaks protocol {PROTOCOL_VERSION}", {"supported": [PROTOCOL_VERSION]})
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "port": "python",
        "language": "python",
        "library": LIBRARY,
        "capabilities": CAPABILITIES,
    }


async def describe(params: dict[str, Any]) -> dict[str, Any]:
    toolkit = await build_toolkit(params["toolkit"], Run(None, {}).native_tool)  # declared, never executed
    return {"openai": toolkit.to_openai(), "anthropic": toolkit.to_anthropic(), "gemini": toolkit.to_gemini()}


def port_error_kind(exc: BaseException) -> str:
    return "provider" if isinstance(exc, tn_provider_error()) else "run"


def tn_provider_error() -> type[BaseException]:
    from toolnexus.client import ProviderError

    return ProviderError


async def dispatch(channel: Channel, message: dict[str, Any]) -> None:
    rid, method = message.get("id"), message["method"]
    params = message.get("params") or {}
    try:
        if method == "initialize":
            result = await initialize(params)
        elif method == "toolkit.describe":
            result = await describe(params)
        elif method == "client.run":
            result = await Run(channel, params).execute()
        else:
            raise RpcError(-32601, f"method not found: {method}")
        channel.send({"jsonrpc": "2.0", "id": rid, "result": result})
    except RpcError as exc:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        channel.send({"jsonrpc": "2.0", "id": rid, "error": error})
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the port refused or failed: its message, classified
        traceback.print_exc(file=sys.stderr)
        channel.send(
            {"jsonrpc": "2.0", "id": rid,
             "error": {"code": PORT_ERROR, "message": str(exc) or repr(exc), "data": {"kind": port_error_kind(exc)}}}
        )


async def serve() -> None:
    loop = asyncio.get_running_loop()
    channel = Channel(loop)
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:  # stdin is read on a thread so host responses arrive mid-run
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=pump, daemon=True).start()
    running: dict[Any, asyncio.Task[None]] = {}
    while (line := await lines.get()) is not None:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            channel.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(message, dict):
            channel.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}})
        elif "method" not in message:
            channel.resolve(message)
        elif message["method"] == "shutdown":
            channel.send({"jsonrpc": "2.0", "id": message.get("id"), "result": {}})
            return
        elif message["method"] == "$/cancel":
            task = running.pop((message.get("params") or {}).get("id"), None)
            if task is not None:
                task.cancel()
        else:
            task = asyncio.create_task(dispatch(channel, message))
            running[message.get("id")] = task
            task.add_done_callback(lambda _t, rid=message.get("id"): running.pop(rid, None))


if __name__ == "__main__":
    asyncio.run(serve())
