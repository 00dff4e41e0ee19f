"""Running one collected variant on the session's shim, up to (not including) its judging.

``execute`` is what a variant item needs from the port: the handshake, the capability
check, the run itself (``runner.run_variant``) and the evidence kept for ``--artifacts``.
It touches the shim and the fake provider and nothing the judging reads, so it can run on
``run_ahead``'s worker thread while pytest judges the previous variant. Whatever goes
wrong comes back as data (``Execution.unjudged``), never as an exception: the item turns
it into the verdicts of its rules, in its own turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import HarnessError, OutgoingMessageTooLarge, ShimError
from .facts import Facts, facts_for
from .runner import RunRecord, run_variant
from .scenario import Variant

if TYPE_CHECKING:
    from .session import ConformanceSession


@dataclass(frozen=True)
class Evidence:
    """What ``--artifacts`` keeps of a failing variant: the run (absent when the shim failed
    mid-run), every JSON-RPC line of it, and the shim's stderr as far as it is kept."""

    record: RunRecord | None
    jsonrpc: list[tuple[str, str]]
    stderr: str


@dataclass(frozen=True)
class Unjudged:
    """Why no rule of the variant could be checked: ``reason`` is the verdicts' reason
    (``transport``, ``capability`` or ``scenario``)."""

    reason: str
    message: str


@dataclass(frozen=True)
class Execution:
    facts: Facts
    record: RunRecord | None = None
    unjudged: Unjudged | None = None
    evidence: Evidence | None = None
    stderr_tail: str = ""


def execute(variant: Variant, conformance: ConformanceSession, file_name: str) -> Execution:
    facts = facts_for(variant)
    try:
        handshake = conformance.handshake()
    except ShimError as exc:
        return Execution(facts, unjudged=Unjudged("transport", str(exc)), stderr_tail=exc.stderr_tail)
    missing = sorted(variant.requires - set(handshake.capabilities))
    if missing:
        why = f"the port does not declare the capabilities {missing} this variant needs"
        return Execution(facts, unjudged=Unjudged("capability", why))
    shim = conformance.shim()
    mark = shim.process.transcript.mark()
    try:
        record = run_variant(variant, shim, conformance.provider(), timeout=conformance.port.timeout, facts=facts)
    except OutgoingMessageTooLarge as exc:  # the scenario's data, not the shim: no stderr to blame
        return Execution(facts, unjudged=Unjudged("scenario", f"scenario file {file_name}: {exc}"))
    except HarnessError as exc:
        # The exception holds the crashed process's stderr; the shim may have a new one by now.
        stderr = getattr(exc, "stderr_tail", "") or shim.process.stderr_tail()
        evidence = Evidence(None, shim.process.transcript.since(mark), stderr)
        return Execution(facts, unjudged=Unjudged("transport", str(exc)), evidence=evidence, stderr_tail=stderr)
    evidence = Evidence(record, shim.process.transcript.since(mark), shim.process.stderr_tail())
    return Execution(facts, record=record, evidence=evidence, stderr_tail=evidence.stderr)
