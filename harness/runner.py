"""Running one variant: fake provider session + shim calls + host callbacks -> a RunRecord.

This module owns the choreography of a variant — phase 1 (run, ask or stream), then for a
resume scenario an optional shim restart and phase 2 (runWithAnswer or askWithAnswer) — and
nothing else: it records what happened, raw, for the checks and the golden to judge.
A port's own refusal (JSON-RPC port error) is data in the record; transport failures
(crash, hang, garbage) propagate as harness errors for the plugin to report.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Protocol

from .fake_provider import FakeProvider
from .host import Host, HostLog, Store
from .scenario import Variant
from .errors import ShimCallError
from .shim_streams import REDACTED, SECRET_MEMBERS

API_KEY = "sk-conformance-test-key"
DEFAULT_MODEL = "conformance-model"


class ShimLike(Protocol):
    def call(self, method: str, params: dict[str, Any], *, timeout: float, handler: Any = None) -> Any: ...

    def restart(self) -> Any: ...


@dataclass
class PhaseRecord:
    """What one entry-point call produced, raw from the wire."""

    entry: str
    params: dict[str, Any]
    requests: list[dict[str, Any]] = field(default_factory=list)
    request_paths: list[str] = field(default_factory=list)
    request_headers: list[dict[str, str]] = field(default_factory=list)
    host: HostLog = field(default_factory=HostLog)
    result: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    executions: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    provider_violations: list[str] = field(default_factory=list)


@dataclass
class RunRecord:
    variant: Variant
    phases: list[PhaseRecord] = field(default_factory=list)
    declarations: dict[str, Any] | None = None  # toolkit.describe: {openai, anthropic, gemini}
    declaration_error: dict[str, Any] | None = None

    @property
    def first(self) -> PhaseRecord:
        return self.phases[0]

    @property
    def resumed(self) -> PhaseRecord | None:
        return self.phases[1] if len(self.phases) > 1 else None


def run_variant(variant: Variant, shim: ShimLike, provider: FakeProvider, *, timeout: float) -> RunRecord:
    data = variant.scenario.data
    resume = data.get("resume")
    turns = list(data["turns"]) + (list(resume["turns"]) if resume else [])
    session = provider.session(turns, style=variant.style)
    store = Store()
    if "storedHistory" in data:
        store.save(_conversation_id(variant), copy.deepcopy(data["storedHistory"]))
    record = RunRecord(variant)
    _describe(record, shim, timeout)

    # Anthropic clients accept the base with or without /v1 (loop.anthropic-endpoint)
    root = (data.get("client") or {}).get("baseUrl") == "root"
    base = _base_params(variant, session.root_url if root else session.base_url)
    first = dict(base, entry=variant.entry, prompt=data["prompt"])
    if _stateful(variant):
        first["id"] = _conversation_id(variant)
    _run_phase(record, shim, session, store, first, timeout)

    if resume and variant.resume_entry:
        pending = (record.first.result or {}).get("pending")
        if pending is None:
            return record  # the halt did not happen; the checks report it
        if resume.get("restartShim"):
            shim.restart()
        second = dict(base, entry=variant.resume_entry)
        second["pending"] = copy.deepcopy(pending)
        second["answer"] = _substitute(copy.deepcopy(resume["answer"]), pending.get("id", ""))
        if variant.resume_entry == "askWithAnswer":
            second["id"] = _conversation_id(variant)
        else:
            second["history"] = copy.deepcopy((record.first.result or {}).get("messages", []))
        if "history" in resume:
            _replace_history(second, resume["history"], store, variant)
        _run_phase(record, shim, session, store, second, timeout)
    return record


def _describe(record: RunRecord, shim: ShimLike, timeout: float) -> None:
    try:
        record.declarations = shim.call("toolkit.describe", {"toolkit": record.variant.toolkit()}, timeout=timeout)
    except ShimCallError as exc:
        if not exc.is_port_error:
            raise
        record.declaration_error = {"kind": (exc.data or {}).get("kind", "toolkit"), "message": exc.message}


def _base_params(variant: Variant, base_url: str) -> dict[str, Any]:
    data = variant.scenario.data
    client = data.get("client", {})
    host = data.get("host", {})
    hooks = host.get("hooks") or {}
    params: dict[str, Any] = {
        "scenario": variant.scenario.id,
        "variant": variant.name,
        "style": variant.style,
        "baseUrl": base_url,
        "apiKey": API_KEY,
        "model": client.get("model", DEFAULT_MODEL),
        "maxTurns": client.get("maxTurns", 10),
        "toolkit": variant.toolkit(),
        "waitFor": "waitFor" in host,
        "store": _stateful(variant) or bool(host.get("store")),
        "hooks": [name for name in ("beforeTool", "afterTool") if name in hooks],
    }
    if "systemPrompt" in client:
        params["systemPrompt"] = client["systemPrompt"]
    return params


def _run_phase(
    record: RunRecord, shim: ShimLike, session: Any, store: Store, params: dict[str, Any], timeout: float
) -> None:
    # The record (and so --artifacts) keeps what was sent minus the credential.
    kept = {k: (REDACTED if k in SECRET_MEMBERS else v) for k, v in params.items()}
    phase = PhaseRecord(entry=params["entry"], params=kept)
    host = Host(record.variant.scenario.data.get("host", {}), store, phase.host)
    already = len(session.requests)
    try:
        reply = shim.call("client.run", params, timeout=timeout, handler=host.handle)
    except ShimCallError as exc:
        if not exc.is_port_error:
            raise
        phase.error = {"kind": (exc.data or {}).get("kind", "run"), "message": exc.message}
    else:
        phase.result = reply.get("result")
        phase.events = reply.get("events") or []
        phase.metrics = reply.get("metrics") or []
        phase.executions = reply.get("executions") or []
    for recorded in session.requests[already:]:
        phase.requests.append(recorded.parsed)
        phase.request_paths.append(recorded.path)
        phase.request_headers.append({k.lower(): v for k, v in recorded.headers.items()})
    phase.provider_violations = [v.message for v in session.violations if v.request_index >= already]
    record.phases.append(phase)


def _replace_history(params: dict[str, Any], history: list[Any], store: Store, variant: Variant) -> None:
    """Resume from a transcript other than the halted one (resume.needs-halted-turn).

    askWithAnswer gets a fresh conversation id holding ``history``; an empty list stores
    nothing there, so the id is unknown to the store.
    """
    if params["entry"] == "askWithAnswer":
        params["id"] = f"{_conversation_id(variant)}-replaced"
        if history:
            store.save(params["id"], copy.deepcopy(history))
    else:
        params["history"] = copy.deepcopy(history)


def _stateful(variant: Variant) -> bool:
    """ask always keeps a conversation; stream does when the scenario asks for streamWithId."""
    return variant.entry == "ask" or (variant.entry == "stream" and bool(variant.scenario.data.get("streamWithId")))


def _conversation_id(variant: Variant) -> str:
    return variant.scenario.data.get("conversationId", f"conv-{variant.scenario.id}")


def _substitute(value: Any, pending_id: str) -> Any:
    if value == "$pending.id":
        return pending_id
    if isinstance(value, dict):
        return {k: _substitute(v, pending_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, pending_id) for v in value]
    return value
