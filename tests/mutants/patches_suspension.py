"""Mutants of §10 suspension and the halted-tool transcript rule (SPEC.md susp.*, halt.*,
keys.* of the Request and the tool event)."""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Any

from catalog import mutant, wrap


def _wrap_request_wire(change: Any) -> None:
    from reference_py.types import Request

    def make(original: Any) -> Any:
        def to_wire(self: Any) -> dict[str, Any]:
            return change(self, original(self))

        return to_wire

    wrap(Request, "to_wire", make)


@mutant("request-null-url", "susp.request-keys", description="a Request without url is written with \"url\": null")
def _null_url(shim: ModuleType) -> None:
    _wrap_request_wire(lambda request, wire: {**wire, "url": wire.get("url")})


@mutant("request-snake-expires", "susp.request-keys", description="Request.expiresAt is written as expires_at")
def _snake_expires(shim: ModuleType) -> None:
    def change(request: Any, wire: dict[str, Any]) -> dict[str, Any]:
        if "expiresAt" in wire:
            wire["expires_at"] = wire.pop("expiresAt")
        return wire

    _wrap_request_wire(change)


@mutant("retry-twice", "susp.waitfor-retry-once", description="an ok Answer re-executes the tool twice")
def _retry_twice(shim: ModuleType) -> None:
    from reference_py.execution import CallRunner

    def make(original: Any) -> Any:
        async def retry(self: Any, *args: Any) -> Any:
            await original(self, *args)
            return await original(self, *args)

        return retry

    wrap(CallRunner, "retry", make)


@mutant("declined-text", "susp.declined", description="a declined in-process suspension says 'declined: ' + prompt")
def _declined_text(shim: ModuleType) -> None:
    import reference_py.execution as execution
    from reference_py.types import ToolResult

    execution.declined = lambda request: ToolResult(output="declined: " + request.prompt, is_error=True)  # type: ignore[assignment]


@mutant("unresolved-text", "susp.unresolved", description="a retry that suspends again says 'unresolved ' (no colon) + prompt")
def _unresolved_text(shim: ModuleType) -> None:
    import reference_py.execution as execution
    from reference_py.types import ToolResult

    execution.unresolved = lambda request: ToolResult(output="unresolved " + request.prompt, is_error=True)  # type: ignore[assignment]


@mutant("waitfor-error-swallowed", "susp.waitfor-error-aborts", description="a waitFor that raises is taken as a decline")
def _waitfor_swallowed(shim: ModuleType) -> None:
    import reference_py as tn

    def make(original: Any) -> Any:
        async def wait_for(self: Any, request: Any, *rest: Any) -> Any:
            try:
                return await original(self, request, *rest)
            except shim.HostError:
                return tn.Answer(id=request.id, ok=False)

        return wait_for

    wrap(shim.Shim, "_wait_for", make)


@mutant("halt-text-empty", "susp.durable-halt", "halt.run-result", description="a halted RunResult has empty text")
def _halt_text(shim: ModuleType) -> None:
    from reference_py.loop import Loop

    def make(original: Any) -> Any:
        async def run(self: Any, **kwargs: Any) -> Any:
            result = await original(self, **kwargs)
            if result.status == "pending":
                result.text = ""
            return result

        return run

    wrap(Loop, "run", make)


@mutant("placeholder-not-prompt", "susp.placeholder", "halt.transcript",
        description="the placeholder says 'awaiting the host: ' + prompt")
def _placeholder_text(shim: ModuleType) -> None:
    import reference_py.execution as execution
    from reference_py.types import ToolResult

    execution.placeholder = lambda request: ToolResult(output="awaiting the host: " + request.prompt, is_error=True)  # type: ignore[assignment]


@mutant("placeholder-with-url", "susp.placeholder", description="the placeholder is prompt + newline + url")
def _placeholder_url(shim: ModuleType) -> None:
    import reference_py.execution as execution
    from reference_py.types import ToolResult

    def placeholder(request: Any) -> Any:
        output = request.prompt if request.url is None else f"{request.prompt}\n{request.url}"
        return ToolResult(output=output, is_error=True)

    execution.placeholder = placeholder  # type: ignore[assignment]


def _wrap_settle(change: Any) -> None:
    import reference_py.loop as loop

    def make(original: Any) -> Any:
        def settle(outcomes: Any, extension: Any) -> Any:
            return change(list(outcomes), extension, original)

        return settle

    wrap(loop, "settle", make)


@mutant("last-suspension-surfaced", "susp.first-in-order", description="a durable turn halts on its last suspension, not its first")
def _last_suspension(shim: ModuleType) -> None:
    from reference_py.suspension import Settlement

    def change(outcomes: list[Any], extension: Any, original: Any) -> Any:
        suspended = [i for i, o in enumerate(outcomes) if o.suspended is not None]
        if len(suspended) < 2:
            return original(outcomes, extension)
        last = suspended[-1]
        return Settlement(outcomes[: last + 1], extension.merge(outcomes[last].suspended, []))

    _wrap_settle(change)


@mutant("halt-drops-placeholder", "halt.transcript", description="the halted call's placeholder is left out of the transcript")
def _drop_placeholder(shim: ModuleType) -> None:
    def change(outcomes: list[Any], extension: Any, original: Any) -> Any:
        settlement = original(outcomes, extension)
        if settlement.halt is not None:
            settlement.kept = settlement.kept[:-1]
        return settlement

    _wrap_settle(change)


@mutant("later-results-kept", "halt.later-suspensions-dropped",
        description="results of calls after the halted one stay in the halted transcript")
def _later_kept(shim: ModuleType) -> None:
    def change(outcomes: list[Any], extension: Any, original: Any) -> Any:
        settlement = original(outcomes, extension)
        if settlement.halt is not None:
            settlement.kept = outcomes
        return settlement

    _wrap_settle(change)


@mutant("halted-call-result-event", "stream.halt-events", description="the halted call gets a tool_result stream event")
def _halted_result_event(shim: ModuleType) -> None:
    def change(outcomes: list[Any], extension: Any, original: Any) -> Any:
        settlement = original(outcomes, extension)
        if settlement.halt is not None:
            settlement.kept = [dataclasses.replace(o, suspended=None) for o in settlement.kept]
        return settlement

    _wrap_settle(change)


def _wrap_tool_metric(change: Any) -> None:
    from reference_py.metrics import Metrics

    def make(original: Any) -> Any:
        async def tool(self: Any, tool: str, source: str, *, is_error: bool, ms: float, pending: bool = False) -> None:
            tool, source, is_error = change(tool, source, is_error, pending)
            await original(self, tool, source, is_error=is_error, ms=ms, pending=pending)

        return tool

    wrap(Metrics, "tool", make)


@mutant("suspension-is-error", "susp.not-a-tool-error", "relay.not-a-tool-error",
        description="a suspension's tool event has isError true")
def _suspension_error(shim: ModuleType) -> None:
    _wrap_tool_metric(lambda tool, source, is_error, pending: (tool, source, is_error or pending))


@mutant("hook-suspension-ignored", "susp.before-tool-raised", description="a beforeTool hook's pending result is ignored; the tool runs")
def _hook_ignored(shim: ModuleType) -> None:
    from reference_py.hooks import Hooks

    def make(original: Any) -> Any:
        async def before_tool(self: Any, event: dict[str, Any]) -> Any:
            override = await original(self, event)
            if override is not None and "result" in override:
                rest = {k: v for k, v in override.items() if k != "result"}
                return rest or None
            return override

        return before_tool

    wrap(Hooks, "before_tool", make)


@mutant("tool-event-snake", "keys.tool-event", description="the tool event writes is_error instead of isError")
def _tool_event_snake(shim: ModuleType) -> None:
    from reference_py.metrics import Metrics

    def make(original: Any) -> Any:
        async def emit(self: Any, event: dict[str, Any]) -> None:
            if event.get("event") == "tool":
                event = {("is_error" if k == "isError" else k): v for k, v in event.items()}
            await original(self, event)

        return emit

    wrap(Metrics, "_emit", make)


@mutant("run-result-snake", "keys.run-result", description="the RunResult carries an extra snake_case tool_call_count")
def _run_result_snake(shim: ModuleType) -> None:
    def make(original: Any) -> Any:
        def result_wire(result: Any) -> dict[str, Any]:
            wire = original(result)
            wire["tool_call_count"] = wire.get("toolCallCount", 0)
            return wire

        return result_wire

    wrap(shim, "_result_wire", make)


@mutant("transcript-extra-key", "keys.transcript",
        description="tool results carry an extra key (OpenAI is_error, Anthropic name)")
def _transcript_extra(shim: ModuleType) -> None:
    from reference_py.providers.anthropic import AnthropicProvider
    from reference_py.providers.openai import OpenAIProvider

    wrap(OpenAIProvider, "result_entry", lambda original: lambda self, call_id, output, is_error: {
        **original(self, call_id, output, is_error), "is_error": is_error})
    wrap(AnthropicProvider, "result_entry", lambda original: lambda self, call_id, output, is_error: {
        **original(self, call_id, output, is_error), "name": "result"})


@mutant("minimal-answer-refused", "susp.answer-keys", description="an Answer carrying only id and ok is refused (data required)")
def _minimal_refused(shim: ModuleType) -> None:
    from reference_py.errors import WireError
    from reference_py.types import Answer

    original = Answer.from_wire.__func__  # type: ignore[attr-defined]

    def from_wire(cls: Any, obj: Any, where: str = "answer") -> Any:
        if isinstance(obj, dict) and set(obj) == {"id", "ok"}:
            raise WireError(f"{where}: missing required key 'data'")
        return original(cls, obj, where)

    Answer.from_wire = classmethod(from_wire)  # type: ignore[method-assign, assignment]


@mutant("pending-any-metadata", "susp.pending-marker",
        description="any object under metadata.pending is taken for a Request (read off it key by key)")
def _pending_any_metadata(shim: ModuleType) -> None:
    import reference_py.execution as execution
    from reference_py.types import Request

    def make(original: Any) -> Any:
        def pending_of(result: Any) -> Any:
            candidate = (getattr(result, "metadata", None) or {}).get("pending")
            if isinstance(candidate, dict):
                return Request(id=str(candidate.get("id", "")), kind=str(candidate.get("kind", "")),
                               prompt=str(candidate.get("prompt", "")))
            return original(result)

        return pending_of

    wrap(execution, "pending_of", make)


@mutant("generated-id-constant", "susp.request-id-unique",
        description="every Request id the port generates is the same")
def _generated_id_constant(shim: ModuleType) -> None:
    import reference_py.builtins as builtins
    import reference_py.types as types

    def make(original: Any) -> Any:
        def pending(**kwargs: Any) -> Any:
            return original(**{**kwargs, "id": kwargs.get("id") or "pnd-1-1"})

        return pending

    wrap(types, "pending", make)
    wrap(builtins, "pending", make)


@mutant("question-prompt-unrendered", "susp.question-kind",
        description="the question tool's prompt leaves out the options")
def _question_prompt_unrendered(shim: ModuleType) -> None:
    import reference_py.builtins as builtins

    def make(original: Any) -> Any:
        def render(questions: list[Any]) -> str:
            return original([{k: v for k, v in q.items() if k != "options"} if isinstance(q, dict) else q for q in questions])

        return render

    wrap(builtins, "render_questions", make)


@mutant("question-output-spaced", "susp.question-output-format",
        description="the question tool writes the JSON of answer.data with spaces (as python does)")
def _question_output_spaced(shim: ModuleType) -> None:
    import json

    import reference_py.builtins as builtins

    def make(original: Any) -> Any:
        async def question(args: dict[str, Any], ctx: Any) -> Any:
            result = await original(args, ctx)
            if ctx.answer is None:
                return result
            return dataclasses.replace(result, output=json.dumps(ctx.answer.data or {}))

        return question

    wrap(builtins, "_question", make)
