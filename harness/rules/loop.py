"""Checks for the §8 wire facts a port's loop puts on the provider wire (SPEC.md loop.*)
and the tool declarations (decl.*)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from ..golden_files import read_golden
from ..runner import PhaseRecord, RunRecord
from ..scenario import Variant
from . import NotApplicable, check
from .model import BUILTIN_NAMES
from .transcript import tool_turns
from .variations import total_is_unusable, turn_usage

OPENAI_KEYS = {"model", "messages", "tools", "tool_choice", "stream", "stream_options"}
ANTHROPIC_KEYS = {"model", "max_tokens", "system", "messages", "tools", "stream"}


def _bodies(record: RunRecord) -> list[tuple[PhaseRecord, int, dict[str, Any]]]:
    found = [(phase, i, body) for phase in record.phases for i, body in enumerate(phase.requests)]
    if not found:
        raise NotApplicable("no provider request was made")
    return found


def _style(record: RunRecord, style: str) -> None:
    if record.variant.style != style:
        raise NotApplicable(f"{style} style only")


def _has_tools(variant: Variant) -> bool:
    return bool(variant.toolkit()["tools"]) or bool(variant.toolkit().get("builtins"))


def _expected_path(base_url: str, style: str) -> str:
    base = urlparse(base_url.rstrip("/")).path
    if style == "openai":
        return base + "/chat/completions"
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def _endpoint(record: RunRecord, style: str) -> Iterator[str]:
    _style(record, style)
    for p, phase in enumerate(record.phases, start=1):
        want = _expected_path(phase.params["baseUrl"], style)
        for i, (path, headers) in enumerate(zip(phase.request_paths, phase.request_headers), start=1):
            where = f"phase {p} request {i}"
            if path != want:
                yield f"{where} went to {path!r}; with base {phase.params['baseUrl']!r} expected {want!r}"
            if "application/json" not in headers.get("content-type", ""):
                yield f"{where}: content-type is {headers.get('content-type')!r}, expected JSON"
            if style == "openai" and not headers.get("authorization", "").startswith("Bearer "):
                yield f"{where} has no Bearer authorization header"
            if style == "anthropic":
                if "x-api-key" not in headers:
                    yield f"{where} has no x-api-key header"
                if headers.get("anthropic-version") != "2023-06-01":
                    yield f"{where}: anthropic-version header is {headers.get('anthropic-version')!r}, expected '2023-06-01'"


@check("loop.openai-endpoint")
def openai_endpoint(record: RunRecord) -> Iterator[str]:
    yield from _endpoint(record, "openai")


@check("loop.anthropic-endpoint")
def anthropic_endpoint(record: RunRecord) -> Iterator[str]:
    yield from _endpoint(record, "anthropic")


@check("loop.openai-body")
def openai_body(record: RunRecord) -> Iterator[str]:
    _style(record, "openai")
    for _, i, body in _bodies(record):
        extra = sorted(set(body) - OPENAI_KEYS)
        if extra:
            yield f"request {i + 1} carries unexpected keys {extra}"
        if "tools" in body and body.get("tool_choice") != "auto":
            yield f"request {i + 1}: tool_choice is {body.get('tool_choice')!r} beside tools, expected 'auto'"


@check("loop.anthropic-body")
def anthropic_body(record: RunRecord) -> Iterator[str]:
    _style(record, "anthropic")
    for _, i, body in _bodies(record):
        extra = sorted(set(body) - ANTHROPIC_KEYS)
        if extra:
            yield f"request {i + 1} carries unexpected keys {extra}"
        if body.get("max_tokens") != 4096:
            yield f"request {i + 1}: max_tokens is {body.get('max_tokens')!r}, expected 4096"


@check("loop.tools-omitted-when-empty")
def tools_omitted(record: RunRecord) -> Iterator[str]:
    if _has_tools(record.variant):
        raise NotApplicable("the toolkit is not empty")
    for _, i, body in _bodies(record):
        present = sorted({"tools", "tool_choice"} & set(body))
        if present:
            yield f"request {i + 1} carries {present} although no tool is declared"


@check("loop.stream-body")
def stream_body(record: RunRecord) -> Iterator[str]:
    for phase in record.phases:
        for i, body in enumerate(phase.requests):
            if phase.entry == "stream":
                if body.get("stream") is not True:
                    yield f"streamed request {i + 1} lacks stream:true"
                if record.variant.style == "openai" and body.get("stream_options") != {"include_usage": True}:
                    yield f"streamed request {i + 1}: stream_options is {body.get('stream_options')!r}"
            elif body.get("stream"):
                yield f"non-streamed request {i + 1} asks for a stream"


@check("loop.user-prompt")
def user_prompt(record: RunRecord) -> Iterator[str]:
    phase = record.first
    if not phase.requests:
        raise NotApplicable("no provider request")
    messages = phase.requests[0].get("messages") or []
    want = {"role": "user", "content": record.variant.scenario.data["prompt"]}
    if not messages or messages[-1] != want:
        yield f"the first request's last message is {messages[-1] if messages else None!r}, expected {want!r}"


@check("loop.system-prompt")
def system_prompt(record: RunRecord) -> Iterator[str]:
    system = (record.variant.scenario.data.get("client") or {}).get("systemPrompt")
    if not system:
        raise NotApplicable("no system prompt configured")
    for _, i, body in _bodies(record):
        messages = body.get("messages") or []
        if record.variant.style == "openai":
            systems = [m for m in messages if m.get("role") == "system"]
            if systems != [{"role": "system", "content": system}] or messages[0].get("role") != "system":
                yield f"request {i + 1}: expected one leading system message {system!r}, got {systems!r}"
        else:
            if body.get("system") != system:
                yield f"request {i + 1}: system is {body.get('system')!r}, expected {system!r}"
            if any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
                yield f"request {i + 1}: an Anthropic body carries a system message in messages"
    if record.variant.style == "anthropic":
        for p, phase in enumerate(record.phases, start=1):
            if any(isinstance(m, dict) and m.get("role") == "system" for m in (phase.result or {}).get("messages") or []):
                yield f"phase {p}: the Anthropic transcript holds a system message; the prompt belongs in the system field only"


@check("loop.model-verbatim")
def model_verbatim(record: RunRecord) -> Iterator[str]:
    for _, i, body in _bodies(record):
        if body.get("model") != record.first.params["model"]:
            yield f"request {i + 1}: model is {body.get('model')!r}, expected {record.first.params['model']!r}"


@check("loop.tool-results-openai", "loop.tool-results-anthropic", "loop.results-in-call-order")
def tool_results(record: RunRecord) -> Iterator[str]:
    turns_seen = 0
    for p, phase in enumerate(record.phases, start=1):
        yield from (f"the fake provider refused a request: {v}" for v in phase.provider_violations)
        copies = [(f"phase {p} request {i}", body.get("messages")) for i, body in enumerate(phase.requests, start=1)]
        copies.append((f"phase {p} transcript", (phase.result or {}).get("messages")))
        for where, messages in copies:
            for turn in tool_turns(messages or [], record.variant.style):
                if turn.messages_after == 0 and not turn.results:
                    continue
                turns_seen += 1
                # a halted transcript answers a prefix of the calls (halt.transcript judges which)
                if turn.result_ids != turn.call_ids[: len(turn.result_ids)]:
                    yield f"{where}: results {turn.result_ids} are not in tool-call order {turn.call_ids}"
    if not turns_seen:
        raise NotApplicable("no tool results were recorded")


@check("loop.final-text")
def final_text(record: RunRecord) -> Iterator[str]:
    last = record.phases[-1]
    turns = list(record.variant.scenario.data["turns"]) + list((record.variant.scenario.data.get("resume") or {}).get("turns", []))
    if not turns or turns[-1].get("toolCalls") or (last.result or {}).get("status") != "done":
        raise NotApplicable("the run does not end on a final answer")
    want = turns[-1].get("text", "")
    if last.result.get("text") != want:
        yield f"RunResult.text is {last.result.get('text')!r}, expected the final turn's text {want!r}"


@check("loop.usage-summed")
def usage_summed(record: RunRecord) -> Iterator[str]:
    phase = record.first
    usage = (phase.result or {}).get("usage")
    if not isinstance(usage, dict):
        raise NotApplicable("no usage reported")
    turns = record.variant.scenario.data["turns"][: len(phase.requests)]
    prompt = sum(turn_usage(t)[0] for t in turns)
    completion = sum(turn_usage(t)[1] for t in turns)
    want = {"promptTokens": prompt, "completionTokens": completion, "totalTokens": prompt + completion}
    if total_is_unusable(record, turns):
        del want["totalTokens"]  # a missing or zero total_tokens: loop.usage-total-missing judges it
    got = {k: usage.get(k) for k in want}
    if got != want:
        yield f"usage is {got}, expected the per-turn sum {want}"


@check("loop.sse-openai", "loop.sse-anthropic")
def sse_assembly(record: RunRecord) -> Iterator[str]:
    streamed = [p for p in record.phases if p.entry == "stream"]
    if not streamed:
        raise NotApplicable("not a streaming variant")
    scripted = {c["id"]: c for t in record.variant.scenario.data["turns"] for c in t.get("toolCalls", [])}
    for phase in streamed:
        turns = record.variant.scenario.data["turns"][: len(phase.requests)]
        if (phase.result or {}).get("status") == "done" and turns and not turns[-1].get("toolCalls"):
            if phase.result.get("text") != turns[-1].get("text", ""):
                yield f"the streamed final text assembled to {phase.result.get('text')!r}, streamed {turns[-1].get('text', '')!r}"
        for body in phase.requests[1:]:
            for turn in tool_turns(body.get("messages") or [], record.variant.style):
                for call in turn.calls:
                    want = scripted.get(call.id)
                    if want is None:
                        continue
                    if record.variant.style == "openai" and call.arguments != want["arguments"]:
                        yield f"assembled arguments of {call.id} are {call.arguments!r}, streamed {want['arguments']!r}"
                    if record.variant.style == "anthropic":
                        import json

                        if call.arguments != json.loads(want["arguments"]):
                            yield f"assembled input of {call.id} is {call.arguments!r}"


@check("loop.anthropic-system-empty")
def anthropic_system_empty(record: RunRecord) -> Iterator[str]:
    _style(record, "anthropic")
    if (record.variant.scenario.data.get("client") or {}).get("systemPrompt"):
        raise NotApplicable("a system prompt is configured")
    for _, i, body in _bodies(record):
        if "system" in body:
            yield f"request {i + 1} sends system {body['system']!r}; the reference omits it"


@check("loop.max-turns-exhaustion")
def max_turns(record: RunRecord) -> Iterator[str]:
    data = record.variant.scenario.data
    max_turns_ = (data.get("client") or {}).get("maxTurns")
    if not max_turns_ or len(data["turns"]) <= max_turns_ or not data["turns"][max_turns_ - 1].get("toolCalls"):
        raise NotApplicable("maxTurns is not exhausted")
    phase = record.first
    if len(phase.requests) > max_turns_:
        yield f"{len(phase.requests)} requests were sent, more than maxTurns={max_turns_}"
    got = phase.result or {}
    if got.get("status") == "pending":
        return
    name = record.variant.name.removesuffix("-uncalled-relay")
    golden = read_golden(record.variant.scenario.id, name)
    if golden is None:
        raise NotApplicable(f"no golden for {name} to hold the reference's answer")
    want = golden["observables"]["phases"][0].get("result") or {}
    for key in ("status", "limit", "text"):
        if got.get(key) != want.get(key):
            yield f"on exhaustion {key} is {got.get(key, '<absent>')!r}; the reference gives {want.get(key, '<absent>')!r}"


@check("decl.openai-shape", "decl.anthropic-shape", "decl.gemini-shape", "decl.order")
def declarations(record: RunRecord) -> Iterator[str]:
    decls = record.declarations
    if decls is None:
        raise NotApplicable(f"toolkit.describe refused the toolkit: {record.declaration_error}")
    tools = record.variant.toolkit()["tools"]
    names = [t["name"] for t in tools]
    gemini = decls.get("gemini")
    gemini_list = gemini[0].get("functionDeclarations") if isinstance(gemini, list) and len(gemini) == 1 and isinstance(gemini[0], dict) else None
    for style, listed in (
        ("openai", [(d.get("function") or {}).get("name") for d in decls.get("openai") or []]),
        ("anthropic", [d.get("name") for d in decls.get("anthropic") or []]),
        ("gemini", [d.get("name") for d in gemini_list or [] if isinstance(d, dict)]),
    ):
        ours = [n for n in listed if n in names]
        if ours != names:
            yield f"{style} declarations list {ours}, expected the toolkit's order {names}"
    schemas = {t["name"]: t.get("schema") for t in tools if t.get("schema") is not None}
    for d in decls.get("openai") or []:
        if set(d) != {"type", "function"} or d.get("type") != "function":
            yield f"openai declaration has keys {sorted(d)}: {d}"
            continue
        fn = d["function"]
        if set(fn) != {"name", "description", "parameters"}:
            yield f"openai declaration of {fn.get('name')!r}: function has keys {sorted(fn)}"
        if fn.get("name") in schemas and fn.get("parameters") != schemas[fn["name"]]:
            yield f"openai declaration of {fn['name']!r}: parameters {fn.get('parameters')!r} differ from the input schema"
    for d in decls.get("anthropic") or []:
        if set(d) != {"name", "description", "input_schema"}:
            yield f"anthropic declaration has keys {sorted(d)}"
        elif d["name"] in schemas and d["input_schema"] != schemas[d["name"]]:
            yield f"anthropic declaration of {d['name']!r}: input_schema differs from the tool's schema"
    if gemini_list is None:
        yield f"gemini declarations are not one {{functionDeclarations: [...]}}: {gemini!r}"
    for p, phase in enumerate(record.phases, start=1):
        for i, body in enumerate(phase.requests, start=1):
            if "tools" in body and body["tools"] != decls.get(record.variant.style):
                yield f"phase {p} request {i}: tools differ from the {record.variant.style} declarations toolkit.describe returned"


@check("decl.builtin-names")
def builtin_names(record: RunRecord) -> Iterator[str]:
    if not record.variant.toolkit().get("builtins"):
        raise NotApplicable("builtins are off")
    if record.declarations is None:
        raise NotApplicable("the toolkit was refused")
    openai = {(d.get("function") or {}).get("name"): (d.get("function") or {}).get("parameters") for d in record.declarations.get("openai") or []}
    anthropic = {d.get("name"): d.get("input_schema") for d in record.declarations.get("anthropic") or []}
    for style, listed in (("openai", openai), ("anthropic", anthropic)):
        missing = sorted(BUILTIN_NAMES - set(listed))
        if missing:
            yield f"{style}: builtins missing from the declarations: {missing}"
        for name in sorted(BUILTIN_NAMES & set(listed)):
            schema = listed[name]
            if not isinstance(schema, dict) or schema.get("type") != "object" or not schema.get("properties"):
                yield f"{style}: builtin {name!r} is declared without its input schema: {schema!r}"
