"""Mutants of the §8 loop: endpoints, request bodies, transcripts, usage, SSE assembly,
declarations, and the golden-only observables (SPEC.md loop.*, decl.*, golden.*)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from catalog import mutant, wrap


def _wrap_body(style: str, change: Any) -> None:
    from reference_py.providers.anthropic import AnthropicProvider
    from reference_py.providers.openai import OpenAIProvider

    owner = OpenAIProvider if style == "openai" else AnthropicProvider

    def make(original: Any) -> Any:
        def body(self: Any, model: str, messages: list[Any], tools: Any, system: str, stream: bool) -> dict[str, Any]:
            built = original(self, model, messages, tools, system, stream)
            change(built, tools)
            return built

        return body

    wrap(owner, "body", make)


@mutant("openai-token-auth", "loop.openai-endpoint", description="OpenAI requests authenticate with 'Token <key>', not Bearer")
def _openai_token_auth(shim: ModuleType) -> None:
    from reference_py.providers.openai import OpenAIProvider

    OpenAIProvider.headers = lambda self, api_key: {"Authorization": f"Token {api_key}", "Content-Type": "application/json"}  # type: ignore[method-assign]


@mutant("anthropic-wrong-version", "loop.anthropic-endpoint", description="anthropic-version header is 2024-10-22")
def _anthropic_version(shim: ModuleType) -> None:
    from reference_py.providers.anthropic import AnthropicProvider

    wrap(AnthropicProvider, "headers", lambda original: lambda self, key: {**original(self, key), "anthropic-version": "2024-10-22"})


@mutant("openai-tool-choice-required", "loop.openai-body", description="OpenAI bodies send tool_choice 'required' beside tools")
def _tool_choice_required(shim: ModuleType) -> None:
    def change(body: dict[str, Any], tools: Any) -> None:
        if "tools" in body:
            body["tool_choice"] = "required"

    _wrap_body("openai", change)


@mutant("anthropic-max-tokens-1024", "loop.anthropic-body", description="Anthropic bodies send max_tokens 1024")
def _max_tokens(shim: ModuleType) -> None:
    _wrap_body("anthropic", lambda body, tools: body.update(max_tokens=1024))


@mutant("empty-tools-sent", "loop.tools-omitted-when-empty", description="an empty tool list is sent as tools: [] (and tool_choice)")
def _empty_tools(shim: ModuleType) -> None:
    def openai(body: dict[str, Any], tools: Any) -> None:
        if not tools:
            body.update(tools=[], tool_choice="auto")

    def anthropic(body: dict[str, Any], tools: Any) -> None:
        if not tools:
            body["tools"] = []

    _wrap_body("openai", openai)
    _wrap_body("anthropic", anthropic)


@mutant("openai-no-stream-options", "loop.stream-body", description="OpenAI streamed bodies omit stream_options.include_usage")
def _no_stream_options(shim: ModuleType) -> None:
    _wrap_body("openai", lambda body, tools: body.pop("stream_options", None))


def _wrap_opening(change: Any) -> None:
    from reference_py.providers.anthropic import AnthropicProvider
    from reference_py.providers.openai import OpenAIProvider

    for owner in (OpenAIProvider, AnthropicProvider):

        def make(original: Any) -> Any:
            def opening(self: Any, history: Any, system: str, prompt: str | None) -> list[dict[str, Any]]:
                return change(original(self, history, system, prompt), system, prompt)

            return opening

        wrap(owner, "opening", make)


@mutant("prompt-as-blocks", "loop.user-prompt", description="the prompt is sent as a list of text blocks, not a string")
def _prompt_blocks(shim: ModuleType) -> None:
    def change(messages: list[dict[str, Any]], system: str, prompt: str | None) -> list[dict[str, Any]]:
        if prompt is not None and messages and messages[-1] == {"role": "user", "content": prompt}:
            messages[-1] = {"role": "user", "content": [{"type": "text", "text": prompt}]}
        return messages

    _wrap_opening(change)


@mutant("system-prompt-misplaced", "loop.system-prompt", description="OpenAI: system message after the user turn; Anthropic: system as blocks")
def _system_misplaced(shim: ModuleType) -> None:
    def change(messages: list[dict[str, Any]], system: str, prompt: str | None) -> list[dict[str, Any]]:
        if messages and messages[0].get("role") == "system":
            messages.append(messages.pop(0))
        return messages

    def anthropic(body: dict[str, Any], tools: Any) -> None:
        if isinstance(body.get("system"), str):
            body["system"] = [{"type": "text", "text": body["system"]}]

    _wrap_opening(change)
    _wrap_body("anthropic", anthropic)


@mutant("model-suffixed", "loop.model-verbatim", description="the model is sent as '<model>-latest'")
def _model_suffixed(shim: ModuleType) -> None:
    for style in ("openai", "anthropic"):
        _wrap_body(style, lambda body, tools: body.update(model=f"{body['model']}-latest"))


@mutant("results-reversed", "loop.tool-results-openai", "loop.tool-results-anthropic", "loop.results-in-call-order",
        description="a finished turn's tool results are recorded in reverse call order")
def _results_reversed(shim: ModuleType) -> None:
    import reference_py.loop as loop

    def make(original: Any) -> Any:
        def settle(outcomes: Any, extension: Any) -> Any:
            settlement = original(outcomes, extension)
            if settlement.halt is None:
                settlement.kept.reverse()
            return settlement

        return settle

    wrap(loop, "settle", make)


@mutant("final-text-dotted", "loop.final-text", description="a finished run's text gets a trailing '.'")
def _final_text(shim: ModuleType) -> None:
    from reference_py.loop import Loop

    def make(original: Any) -> Any:
        async def run(self: Any, **kwargs: Any) -> Any:
            result = await original(self, **kwargs)
            if result.status == "done":
                result.text += "."
            return result

        return run

    wrap(Loop, "run", make)


@mutant("usage-last-turn-only", "loop.usage-summed", description="usage is replaced by each turn's usage instead of summed")
def _usage_last(shim: ModuleType) -> None:
    import reference_py.loop as loop

    loop.add_usage = lambda into, more: into.update(more)  # type: ignore[assignment]


def _first_fragment_only(events: AsyncIterator[Any], fragments: Any) -> AsyncIterator[Any]:
    """Drop every argument fragment of a call after its first one (assembly by replacement)."""

    async def filtered() -> AsyncIterator[Any]:
        seen: set[Any] = set()
        async for event in events:
            for key, holder in fragments(event):
                if key in seen:
                    holder.clear()
                seen.add(key)
            yield event

    return filtered()


@mutant("sse-openai-first-fragment", "loop.sse-openai", description="OpenAI SSE keeps only the first arguments fragment of a call")
def _sse_openai(shim: ModuleType) -> None:
    import reference_py.providers.openai as openai

    def fragments(chunk: Any) -> list[tuple[Any, dict[str, Any]]]:
        found = []
        for choice in (chunk.get("choices") or []) if isinstance(chunk, dict) else []:
            for part in ((choice.get("delta") or {}).get("tool_calls") or []):
                function = part.get("function") or {}
                if function.get("arguments"):
                    found.append((part.get("index"), _ArgumentsHolder(function)))
        return found

    original = openai.sse_payloads
    openai.sse_payloads = lambda lines: _first_fragment_only(original(lines), fragments)  # type: ignore[assignment]


class _ArgumentsHolder:
    """Clears one fragment in place so the filtered chunk still parses."""

    def __init__(self, target: dict[str, Any], key: str = "arguments") -> None:
        self.target, self.key = target, key

    def clear(self) -> None:
        self.target[self.key] = ""


@mutant("sse-anthropic-first-fragment", "loop.sse-anthropic", description="Anthropic SSE keeps only the first partial_json of a block")
def _sse_anthropic(shim: ModuleType) -> None:
    import reference_py.providers.anthropic as anthropic

    def fragments(event: Any) -> list[tuple[Any, Any]]:
        delta = event.get("delta") if isinstance(event, dict) else None
        if event.get("type") == "content_block_delta" and isinstance(delta, dict) and delta.get("type") == "input_json_delta":
            return [(event.get("index"), _ArgumentsHolder(delta, "partial_json"))]
        return []

    original = anthropic.sse_payloads
    anthropic.sse_payloads = lambda lines: _first_fragment_only(original(lines), fragments)  # type: ignore[assignment]


@mutant("assistant-args-recompacted", "loop.assistant-turn",
        description="OpenAI: the stored assistant turn's tool_call arguments are re-serialized compactly")
def _assistant_recompacted(shim: ModuleType) -> None:
    from reference_py.providers.openai import OpenAIProvider

    def make(original: Any) -> Any:
        def parse(self: Any, payload: Any) -> Any:
            turn = original(self, payload)
            calls = turn.message.get("tool_calls") or []
            turn.message = {**turn.message, "tool_calls": [_recompacted(c) for c in calls]} if calls else turn.message
            return turn

        return parse

    wrap(OpenAIProvider, "parse", make)


def _recompacted(call: dict[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    try:
        function["arguments"] = json.dumps(json.loads(function.get("arguments") or "{}"), separators=(",", ":"))
    except ValueError:
        pass
    return {**call, "function": function}


def _wrap_describe(shim: ModuleType, change: Any) -> None:
    def make(original: Any) -> Any:
        async def describe(self: Any, params: dict[str, Any]) -> dict[str, Any]:
            described = await original(self, params)
            change(described)
            return described

        return describe

    wrap(shim.Shim, "describe", make)


@mutant("decl-reversed", "decl.order", description="declarations list the toolkit's tools in reverse order")
def _decl_reversed(shim: ModuleType) -> None:
    def change(described: dict[str, Any]) -> None:
        described["openai"].reverse()
        described["anthropic"].reverse()

    _wrap_describe(shim, change)


@mutant("decl-openai-strict", "decl.openai-shape", description="OpenAI declarations carry an extra top-level 'strict' key")
def _decl_openai(shim: ModuleType) -> None:
    _wrap_describe(shim, lambda d: [decl.update(strict=True) for decl in d["openai"]])


@mutant("decl-anthropic-typed", "decl.anthropic-shape", description="Anthropic declarations carry an extra 'type' key")
def _decl_anthropic(shim: ModuleType) -> None:
    _wrap_describe(shim, lambda d: [decl.update(type="custom") for decl in d["anthropic"]])


@mutant("decl-gemini-flat", "decl.gemini-shape", description="Gemini declarations are a flat list, not one functionDeclarations")
def _decl_gemini(shim: ModuleType) -> None:
    def change(described: dict[str, Any]) -> None:
        described["gemini"] = [d for group in described["gemini"] for d in group.get("functionDeclarations", [])]

    _wrap_describe(shim, change)


@mutant("builtin-bash-missing", "decl.builtin-names", description="the bash builtin is left out of the declarations")
def _builtin_missing(shim: ModuleType) -> None:
    def change(described: dict[str, Any]) -> None:
        described["openai"] = [d for d in described["openai"] if d["function"]["name"] != "bash"]

    _wrap_describe(shim, change)


@mutant("native-source-renamed", "golden.observables", description="native tools report source 'host' in tool events")
def _source_renamed(shim: ModuleType) -> None:
    from reference_py.metrics import Metrics

    def make(original: Any) -> Any:
        async def tool(self: Any, tool: str, source: str, **kwargs: Any) -> None:
            await original(self, tool, "host" if source == "native" else source, **kwargs)

        return tool

    wrap(Metrics, "tool", make)


@mutant("undeclared-tool-lowercase", "loop.undeclared-tool-call",
        description="a call of an undeclared tool gets 'unknown tool: <name>' with source 'unknown', as the reference once did")
def _undeclared_lowercase(shim: ModuleType) -> None:
    from reference_py.execution import CallRunner
    from reference_py.types import ToolResult

    def make_execute(original: Any) -> Any:
        async def execute(self: Any, call: Any, *args: Any) -> Any:
            if call.name not in self._tools:
                return ToolResult(output=f"unknown tool: {call.name}", is_error=True)
            return await original(self, call, *args)

        return execute

    wrap(CallRunner, "_execute", make_execute)
    wrap(CallRunner, "_source", lambda original: lambda self, name: original(self, name) if name in self._tools else "unknown")


@mutant("register-last-wins", "decl.runtime-register",
        description="a tool registered at runtime replaces a tool (or builtin) of the same name")
def _register_last_wins(shim: ModuleType) -> None:
    from reference_py.toolkit import Toolkit

    def register(self: Any, *tools: Any) -> Any:
        for tool in tools:
            self.tools = [t for t in self.tools if t.name != tool.name] + [tool]
        return self

    Toolkit.register = register  # type: ignore[method-assign]


@mutant("register-skips-relay-guard", "relay.collision-guard-register",
        description="runtime registration adds a relay tool named like a builtin (as golang 0.16.0's Register does)")
def _register_skips_guard(shim: ModuleType) -> None:
    from reference_py.toolkit import Toolkit

    def register(self: Any, *tools: Any) -> Any:
        self.tools.extend(t for t in tools if self.get(t.name) is None)
        return self

    Toolkit.register = register  # type: ignore[method-assign]
