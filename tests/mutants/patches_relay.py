"""Mutants of relay mode (SPEC.md relay.*, absent.byte-identical)."""

from __future__ import annotations

import dataclasses
import json
from types import ModuleType
from typing import Any

from catalog import mutant, wrap

RELAY_NAMES: set[str] = set()


def _wrap_stamp(change: Any) -> None:
    from reference_py.relay import RelayExtension, relay_calls

    def make(original: Any) -> Any:
        def stamp(self: Any, request: Any, call: Any, args: dict[str, Any], raw: str) -> Any:
            stamped = original(self, request, call, args, raw)
            calls = relay_calls(stamped)
            if not calls:
                return stamped
            data = {**(stamped.data or {}), "calls": [change(dict(c), stamped, call) for c in calls]}
            return dataclasses.replace(stamped, data=data)

        return stamp

    wrap(RelayExtension, "stamp", make)


@mutant("relay-schema-dropped", "relay.declared-like-any-tool", description="a relay tool is declared with an empty schema, not its own")
def _schema_dropped(shim: ModuleType) -> None:
    import reference_py.relay as relay

    wrap(relay, "relay_tool", lambda original: lambda name, description, schema=None: original(name, description, None))


@mutant("relay-kind-renamed", "relay.request-kind", description="relay Requests are written with kind 'relay'")
def _kind_renamed(shim: ModuleType) -> None:
    from reference_py.types import Request

    def make(original: Any) -> Any:
        def to_wire(self: Any) -> dict[str, Any]:
            wire = original(self)
            return {**wire, "kind": "relay"} if wire["kind"] == "tool_call" else wire

        return to_wire

    wrap(Request, "to_wire", make)


@mutant("relay-call-extra-key", "relay.call-entry-keys", description="data.calls entries carry an extra 'type' key")
def _call_extra_key(shim: ModuleType) -> None:
    _wrap_stamp(lambda entry, request, call: {**entry, "type": "function"})


@mutant("relay-call-id-unstamped", "relay.call-id-stamped", description="data.calls ids are the Request id, not the provider call id")
def _call_id(shim: ModuleType) -> None:
    _wrap_stamp(lambda entry, request, call: {**entry, "id": request.id})


@mutant("relay-arguments-reserialized", "relay.arguments-raw-openai",
        description="data.calls arguments are re-serialized with json.dumps defaults")
def _reserialized(shim: ModuleType) -> None:
    _wrap_stamp(lambda entry, request, call: {**entry, "arguments": json.dumps(entry["input"])})


@mutant("relay-input-dropped", "relay.arguments-parse-to-input", description="data.calls input is {} whatever the arguments")
def _input_dropped(shim: ModuleType) -> None:
    _wrap_stamp(lambda entry, request, call: {**entry, "input": {}})


@mutant("relay-args-rewrite-ignored", "relay.args-rewrite", description="data.calls carry the provider's arguments, not the hook's rewrite")
def _rewrite_ignored(shim: ModuleType) -> None:
    _wrap_stamp(lambda entry, request, call: {**entry, "input": dict(call.args), "arguments": call.raw_arguments})


@mutant("relay-first-call-only", "relay.calls-in-one-request", description="a durable halt surfaces only the first relay call of the turn")
def _first_only(shim: ModuleType) -> None:
    from reference_py.relay import RelayExtension

    RelayExtension.merge = lambda self, first, later: first  # type: ignore[method-assign]


@mutant("relay-merged-into-non-relay", "relay.non-relay-first-uncontaminated",
        description="relay calls after a non-relay suspension are merged into its Request")
def _merged_into_non_relay(shim: ModuleType) -> None:
    from reference_py.relay import RelayExtension, relay_calls

    def make(original: Any) -> Any:
        def merge(self: Any, first: Any, later: Any) -> Any:
            if first.is_relay:
                return original(self, first, later)
            calls = [c for request in later for c in relay_calls(request)]
            return dataclasses.replace(first, data={**(first.data or {}), "calls": calls}) if calls else first

        return merge

    wrap(RelayExtension, "merge", make)


@mutant("sequential-calls", "relay.inprocess-one-callback-per-call",
        description="a turn's calls run one after another, so waitFor callbacks are never outstanding together")
def _sequential(shim: ModuleType) -> None:
    import reference_py.loop as loop

    async def gather_in_order(jobs: Any) -> list[Any]:
        return [await job for job in jobs]

    loop.gather_in_order = gather_in_order  # type: ignore[assignment]


@mutant("relay-results-ignored", "relay.answer-shapes", description="Answer.data.results is ignored for relay calls")
def _results_ignored(shim: ModuleType) -> None:
    import reference_py.relay as relay

    relay.supplied_results = lambda answer: {}  # type: ignore[assignment]


@mutant("relay-shorthand-any-count", "relay.shorthand-several-calls",
        description="the shorthand output answers every relay call, whatever the Request's call count")
def _shorthand_any(shim: ModuleType) -> None:
    import reference_py.relay as relay

    def relay_result(request: Any, answer: Any, call_id: str, name: str, *, missing: Any) -> Any:
        if not answer.ok:
            return relay.declined(request)
        by_id = relay.supplied_results(answer)
        if call_id in by_id:
            return by_id[call_id]
        shorthand = relay.shorthand_result(answer)
        return shorthand if shorthand is not None else missing

    relay.relay_result = relay_result  # type: ignore[assignment]


@mutant("relay-shorthand-ignored", "relay.shorthand-one-call-only",
        description="the shorthand of a one-call relay Request is ignored: the call gets the missing-result error")
def _shorthand_ignored(shim: ModuleType) -> None:
    import reference_py.relay as relay

    def relay_result(request: Any, answer: Any, call_id: str, name: str, *, missing: Any) -> Any:
        if not answer.ok:
            return relay.declined(request)
        return relay.supplied_results(answer).get(call_id, missing)

    relay.relay_result = relay_result  # type: ignore[assignment]


@mutant("relay-caller-error-dropped", "relay.caller-failure", description="isError of the caller's relay result is dropped")
def _caller_error_dropped(shim: ModuleType) -> None:
    import reference_py.relay as relay

    def clean(result: Any) -> Any:
        return dataclasses.replace(result, is_error=False) if result is not None else None

    wrap(relay, "supplied_results", lambda original: lambda answer: {k: clean(v) for k, v in original(answer).items()})
    wrap(relay, "shorthand_result", lambda original: lambda answer: clean(original(answer)))


@mutant("relay-declined-bare", "relay.declined", description="a declined relay call says 'declined/expired' without the prompt")
def _declined_bare(shim: ModuleType) -> None:
    import reference_py.relay as relay
    from reference_py.execution import CallRunner
    from reference_py.types import ToolResult

    relay.declined = lambda request: ToolResult(output="declined/expired", is_error=True)  # type: ignore[assignment]

    def make(original: Any) -> Any:  # the in-process path declines through the §10 retry
        async def retry(self: Any, call: Any, args: Any, raw: str, turn: int, request: Any, answer: Any) -> Any:
            if self._source(call.name) == "relay" and (answer is None or not answer.ok):
                return ToolResult(output="declined/expired", is_error=True)
            return await original(self, call, args, raw, turn, request, answer)

        return retry

    wrap(CallRunner, "retry", make)


@mutant("relay-source-native", "relay.not-a-tool-error", description="a relay suspension's tool event reports source 'native'")
def _source_native(shim: ModuleType) -> None:
    from reference_py.metrics import Metrics

    def make(original: Any) -> Any:
        async def tool(self: Any, tool: str, source: str, **kwargs: Any) -> None:
            await original(self, tool, "native" if source == "relay" else source, **kwargs)

        return tool

    wrap(Metrics, "tool", make)


@mutant("collision-guard-off", "relay.collision-guard", description="a relay tool named like a builtin is accepted")
def _guard_off(shim: ModuleType) -> None:
    import reference_py.toolkit as toolkit

    toolkit.check_relay_collisions = lambda tools: None  # type: ignore[assignment]


@mutant("collision-guard-overreach", "relay.non-relay-may-shadow", description="any tool named like a builtin is refused")
def _guard_overreach(shim: ModuleType) -> None:
    import reference_py.toolkit as toolkit
    from reference_py.builtins import BUILTIN_NAMES
    from reference_py.errors import ToolkitError

    def guard(tools: Any) -> None:
        colliding = sorted({t.name for t in tools if t.source != "builtin" and t.name in BUILTIN_NAMES})
        if colliding:
            raise ToolkitError(f"tool name collides with a built-in tool: {colliding}")

    toolkit.check_relay_collisions = guard  # type: ignore[assignment]


@mutant("relay-declared-first", "relay.uncalled-inert", description="relay tools are declared before every other tool")
def _declared_first(shim: ModuleType) -> None:
    def make(original: Any) -> Any:
        async def build_toolkit(self: Any, spec: dict[str, Any], executions: Any) -> Any:
            toolkit = await original(self, spec, executions)
            toolkit.tools.sort(key=lambda t: t.source != "relay")
            return toolkit

        return build_toolkit

    wrap(shim.Shim, "build_toolkit", make)


@mutant("relay-presence-changes-body", "relay.uncalled-inert",
        description="declaring any relay tool adds parallel_tool_calls:false (OpenAI) / tool_choice auto (Anthropic)")
def _presence_changes_body(shim: ModuleType) -> None:
    from reference_py.providers.anthropic import AnthropicProvider
    from reference_py.providers.openai import OpenAIProvider

    extra = {OpenAIProvider: {"parallel_tool_calls": False}, AnthropicProvider: {"tool_choice": {"type": "auto"}}}
    for owner, keys in extra.items():

        def make(original: Any, keys: dict[str, Any] = keys) -> Any:
            def body(self: Any, model: str, messages: Any, tools: Any, system: str, stream: bool) -> dict[str, Any]:
                built = original(self, model, messages, tools, system, stream)
                if any(t.source == "relay" for t in tools):
                    built.update(keys)
                return built

            return body

        wrap(owner, "body", make)


@mutant("relay-first-turn-only", "relay.multi-round", description="a relay tool relays only in a run's first turn, later calls fail")
def _first_turn_only(shim: ModuleType) -> None:
    import reference_py.relay as relay
    from reference_py.types import ToolResult

    def make(original: Any) -> Any:
        def relay_tool(name: str, description: str, schema: Any = None) -> Any:
            tool = original(name, description, schema)

            async def execute(args: dict[str, Any], ctx: Any) -> Any:
                if ctx.turn > 1 and ctx.answer is None:
                    return ToolResult(output=f"relay unavailable for {name}", is_error=True)
                return await tool.execute(args, ctx)

            return dataclasses.replace(tool, execute=execute)

        return relay_tool

    wrap(relay, "relay_tool", make)


@mutant("real-tools-skipped-beside-relay", "relay.alongside-real-tools",
        description="non-relay calls in a turn with relay calls get a 'skipped' error instead of running")
def _real_skipped(shim: ModuleType) -> None:
    import reference_py.loop as loop
    import reference_py.relay as relay
    from reference_py.types import ToolResult

    wrap(relay, "relay_tool", lambda original: lambda name, *rest: RELAY_NAMES.add(name) or original(name, *rest))

    def make(original: Any) -> Any:
        def settle(outcomes: Any, extension: Any) -> Any:
            outcomes = list(outcomes)
            if any(o.call.name in RELAY_NAMES for o in outcomes):
                skipped = ToolResult(output="skipped: the turn has relay calls", is_error=True)
                outcomes = [o if o.call.name in RELAY_NAMES or o.suspended is not None
                            else dataclasses.replace(o, result=skipped) for o in outcomes]
            return original(outcomes, extension)

        return settle

    wrap(loop, "settle", make)


@mutant("norelay-drops-tool-choice", "loop.openai-body", relay=False,
        description="with relay support switched off, OpenAI bodies lose tool_choice (the switch leaks into the loop)")
def _norelay_tool_choice(shim: ModuleType) -> None:
    from reference_py.providers.openai import OpenAIProvider

    def make(original: Any) -> Any:
        def create_client(**kwargs: Any) -> Any:
            made = original(**kwargs)
            if not kwargs.get("relay", True) and isinstance(made._loop.config.provider, OpenAIProvider):
                provider = made._loop.config.provider
                plain = provider.body
                provider.body = lambda *args: {k: v for k, v in plain(*args).items() if k != "tool_choice"}
            return made

        return create_client

    wrap(shim.tn, "create_client", make)  # the name the shim calls


@mutant("relay-support-leaks", "absent.byte-identical", "loop.openai-body",
        description="relay support adds parallel_tool_calls:false to every OpenAI body, relay tool or not")
def _relay_support_leaks(shim: ModuleType) -> None:
    from reference_py.providers.openai import OpenAIProvider

    def make(original: Any) -> Any:
        def create_client(**kwargs: Any) -> Any:
            made = original(**kwargs)
            if kwargs.get("relay", True) and isinstance(made._loop.config.provider, OpenAIProvider):
                provider = made._loop.config.provider
                plain = provider.body
                provider.body = lambda *args: {**plain(*args), "parallel_tool_calls": False}
            return made

        return create_client

    wrap(shim.tn, "create_client", make)  # the name the shim calls
