"""Running one variant: fake provider session + shim calls + host callbacks -> a RunRecord.

This module owns the choreography of a variant — phase 1 (run, ask or stream), then for a
resume scenario an optional shim restart and phase 2 (runWithAnswer or askWithAnswer), or for
a rerun scenario phase 2 as a second run or ask with the halted transcript — and nothing else: it records what happened, raw, for the checks and the golden to judge.
A port's own refusal (JSON-RPC port error) is data in the record; transport failures
(crash, hang, garbage) propagate as harness errors for the plugin to report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.errors import ShimCallError
from toolnexus_conformance.helpers.json_copy import copy_json
from toolnexus_conformance.run.facts import Facts, facts_for
from toolnexus_conformance.run.host import Exchange, Host, HostLog, Store, hold_timeout_for
from toolnexus_conformance.run.value_model import event_value, metric_value, run_result_value
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.scenario.relations import Counterpart
from toolnexus_conformance.shim.streams import REDACTED, SECRET_MEMBERS

API_KEY = "sk-conformance-test-key"
DEFAULT_MODEL = "conformance-model"


class ShimLike(Protocol):
    def call(self, method: str, params: dict[str, Any], *, timeout: float, handler: Any = None) -> Any: ...

    def restart(self) -> Any: ...

    def prepare_restart(self) -> None: ...


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
    # The client.run reply exactly as the shim sent it (result, events, metrics are kept
    # above read through the value model, SPEC.md §6); --artifacts shows this one.
    raw_reply: dict[str, Any] | None = None

    @property
    def resume_exchange(self) -> Exchange | None:
        """The pending Request a resume phase was given and the Answer passed with it."""
        if "answer" not in self.params:
            return None
        return Exchange(self.params.get("pending"), self.params["answer"])


@dataclass
class RunRecord:
    variant: Variant
    facts: Facts
    phases: list[PhaseRecord] = field(default_factory=list)
    declarations: dict[str, Any] | None = None  # toolkit.describe: {openai, anthropic, gemini}
    declaration_error: dict[str, Any] | None = None
    # Per relation rule (toolnexus_conformance.scenario.relations), the counterpart run it compares this one with;
    # filled by the session after the run, absent where nothing provides one.
    counterparts: dict[str, Counterpart] = field(default_factory=dict)

    @property
    def first(self) -> PhaseRecord:
        return self.phases[0]

    @property
    def resumed(self) -> PhaseRecord | None:
        """The runWithAnswer / askWithAnswer phase of a resume scenario."""
        return self.phases[1] if len(self.phases) > 1 and self.facts.resume is not None else None

    @property
    def rerun(self) -> PhaseRecord | None:
        """The second run (or ask) of a rerun scenario."""
        return self.phases[1] if len(self.phases) > 1 and self.facts.rerun is not None else None


def run_variant(
    variant: Variant,
    shim: ShimLike,
    provider: FakeProvider,
    *,
    timeout: float,
    facts: Facts | None = None,
    resume_shim: ShimLike | None = None,
    declarations: bool = True,
) -> RunRecord:
    """Run one variant; ``facts`` are the variant's, when the caller derived them already.
    ``resume_shim`` runs the resume phase instead of ``shim`` (a cross-port resume: the
    halt's Request and transcript go to another port, as a durable host would hand them).
    ``declarations=False`` skips ``toolkit.describe``, for a caller that judges observables
    only (a differential search: the declarations are no observable, run/observables.py)."""
    facts = facts if facts is not None else facts_for(variant)
    session = provider.session(facts.script, style=facts.style)
    # Ended once the run is over: the provider would otherwise keep every request and reply
    # of every run for as long as it serves (a differential search's whole length).
    try:
        store = Store()
        if facts.stored_history is not None:
            store.save(facts.conversation_id, copy_json(list(facts.stored_history)))
        record = RunRecord(variant, facts)
        if (facts.resume_entry or facts.rerun_entry) and facts.restart_before_resume:
            (resume_shim or shim).prepare_restart()  # the fresh process starts while phase 1 runs
        if declarations:
            _describe(record, shim, timeout)

        # Anthropic clients accept the base with or without /v1 (loop.anthropic-endpoint)
        base = _base_params(facts, session.root_url if facts.root_base_url else session.base_url)
        first = dict(base, entry=facts.entry, prompt=facts.prompt)
        if _stateful(facts):
            first["id"] = facts.conversation_id
        _run_phase(record, shim, session, store, first, timeout)

        second_entry = facts.resume_entry if facts.resume is not None else facts.rerun_entry if facts.rerun is not None else None
        pending = (record.first.result or {}).get("pending")
        if second_entry is None or pending is None:
            return record  # no second phase, or the halt did not happen (the checks report it)
        resumer = resume_shim if resume_shim is not None else shim
        if facts.restart_before_resume:
            resumer.restart()
        # The halted conversation goes on: by its id for the ask entry points, else as history.
        second = dict(base, entry=second_entry)
        if second_entry in ("ask", "askWithAnswer"):
            second["id"] = facts.conversation_id
        else:
            second["history"] = copy_json((record.first.result or {}).get("messages", []))
        if facts.resume is not None:
            second["pending"] = copy_json(pending)
            second["answer"] = _substitute(copy_json(facts.resume["answer"]), pending.get("id", ""))
            if facts.resume_replaces_history:
                _replace_history(second, facts.resume["history"], store, facts)
        else:  # a rerun: the same entry point again, with a new prompt and the toolkit it builds now
            second.update(prompt=(facts.rerun or {})["prompt"], toolkit=facts.rerun_toolkit)
        _run_phase(record, resumer, session, store, second, timeout)
        return record
    finally:
        provider.end_session(session)


def _describe(record: RunRecord, shim: ShimLike, timeout: float) -> None:
    try:
        record.declarations = shim.call("toolkit.describe", {"toolkit": record.facts.toolkit}, timeout=timeout)
    except ShimCallError as exc:
        if not exc.is_port_error:
            raise
        record.declaration_error = {"kind": (exc.data or {}).get("kind", "toolkit"), "message": exc.message}


def _base_params(facts: Facts, base_url: str) -> dict[str, Any]:
    params: dict[str, Any] = {
        "scenario": facts.scenario_id,
        "variant": facts.variant_name,
        "style": facts.style,
        "baseUrl": base_url,
        "apiKey": API_KEY,
        "model": facts.model or DEFAULT_MODEL,
        "maxTurns": facts.max_turns if facts.max_turns is not None else 10,  # 0 is a real limit
        "toolkit": facts.toolkit,
        "waitFor": facts.in_process,
        "store": _stateful(facts) or facts.store_configured,
        "hooks": list(facts.hooks),
    }
    if facts.system_prompt is not None:
        params["systemPrompt"] = facts.system_prompt
    return params


def _run_phase(
    record: RunRecord, shim: ShimLike, session: Any, store: Store, params: dict[str, Any], timeout: float
) -> None:
    # The record (and so --artifacts) keeps what was sent minus the credential.
    kept = {k: (REDACTED if k in SECRET_MEMBERS else v) for k, v in params.items()}
    phase = PhaseRecord(entry=params["entry"], params=kept)
    host = Host(record.facts.wait_for, record.facts.hook_rules, store, phase.host, hold_timeout=hold_timeout_for(timeout))
    already = len(session.requests)
    try:
        reply = shim.call("client.run", params, timeout=timeout, handler=host)
    except ShimCallError as exc:
        if not exc.is_port_error:
            raise
        phase.error = {"kind": (exc.data or {}).get("kind", "run"), "message": exc.message}
    else:
        phase.raw_reply = reply
        phase.result = run_result_value(reply.get("result"))
        phase.events = [event_value(e) for e in reply.get("events") or []]
        phase.metrics = [metric_value(m) for m in reply.get("metrics") or []]
        phase.executions = reply.get("executions") or []
    for recorded in session.requests[already:]:
        phase.requests.append(recorded.parsed)
        phase.request_paths.append(recorded.path)
        phase.request_headers.append({k.lower(): v for k, v in recorded.headers.items()})
    phase.provider_violations = [v.message for v in session.violations if v.request_index >= already]
    record.phases.append(phase)


def _replace_history(params: dict[str, Any], history: list[Any], store: Store, facts: Facts) -> None:
    """Resume from a transcript other than the halted one (resume.needs-halted-turn).

    askWithAnswer gets a fresh conversation id holding ``history``; an empty list stores
    nothing there, so the id is unknown to the store.
    """
    if params["entry"] == "askWithAnswer":
        params["id"] = f"{facts.conversation_id}-replaced"
        if history:
            store.save(params["id"], copy_json(history))
    else:
        params["history"] = copy_json(history)


def _stateful(facts: Facts) -> bool:
    """ask always keeps a conversation; stream does when the scenario asks for streamWithId."""
    return facts.entry == "ask" or (facts.entry == "stream" and facts.stream_with_id)


def _substitute(value: Any, pending_id: str) -> Any:
    if value == "$pending.id":
        return pending_id
    if isinstance(value, dict):
        return {k: _substitute(v, pending_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, pending_id) for v in value]
    return value
