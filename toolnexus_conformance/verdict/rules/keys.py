"""The byte-identical-keys check: every wire object a port emits, validated raw (before
normalization) against the schemas, so a snake_cased, missing, extra or null-instead-of-
absent key fails with its JSON path (SPEC.md keys.*)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.helpers.schemas import validate
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord

from . import NotApplicable, check


def _violations(schema: str, instance: Any, where: str, *, owned_elsewhere: tuple[str, ...] = ()) -> Iterator[str]:
    """Schema violations of ``instance``, minus those under a path another rule judges."""
    for v in validate(schema, instance):
        if any(v.json_path == path or v.json_path.startswith((path + ".", path + "[")) for path in owned_elsewhere):
            continue
        yield f"{where}{v.json_path[1:]}: {v.message}"


# The transcript's keys are keys.transcript's, a Request's keys are susp.request-keys'.
RESULT_OWNED_ELSEWHERE = ("$.messages", "$.pending")
# A done event's RunResult is keys.run-result's (stream.event-fields checks it is the run's).
EVENT_OWNED_ELSEWHERE = ("$.result", "$.request")


@check("keys.run-result")
def run_result(record: RunRecord, facts: Facts) -> Iterator[str]:
    results = [(p, phase.result) for p, phase in enumerate(record.phases) if phase.result is not None]
    if not results:
        raise NotApplicable("no RunResult")
    for p, result in results:
        yield from _violations("run-result", result, f"phase {p + 1} RunResult", owned_elsewhere=RESULT_OWNED_ELSEWHERE)


@check("keys.transcript")
def transcript(record: RunRecord, facts: Facts) -> Iterator[str]:
    schema = f"{facts.style}-message"
    seen = False
    for p, phase in enumerate(record.phases):
        copies = [("messages", (phase.result or {}).get("messages"))]
        copies += [(f"store.save[{i}]", save["messages"]) for i, save in enumerate(phase.host.saves)]
        for where, messages in copies:
            if messages is None:
                continue
            seen = True
            for i, message in enumerate(messages):
                yield from _violations(schema, message, f"phase {p + 1} {where}[{i}]")
    if not seen:
        raise NotApplicable("no transcript")


@check("keys.tool-event")
def tool_event(record: RunRecord, facts: Facts) -> Iterator[str]:
    events = [(p, i, m) for p, phase in enumerate(record.phases) for i, m in enumerate(phase.metrics) if m.get("event") == "tool"]
    if not events:
        raise NotApplicable("no tool events")
    for p, i, event in events:
        yield from _violations("tool-event", event, f"phase {p + 1} metrics[{i}]")


@check("keys.stream-events")
def stream_events(record: RunRecord, facts: Facts) -> Iterator[str]:
    streamed = [(p, phase) for p, phase in enumerate(record.phases) if phase.entry == "stream"]
    if not streamed:
        raise NotApplicable("not a streaming variant")
    for p, phase in streamed:
        for i, event in enumerate(phase.events):
            yield from _violations("stream-event", event, f"phase {p + 1} events[{i}]", owned_elsewhere=EVENT_OWNED_ELSEWHERE)
