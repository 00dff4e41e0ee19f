"""Checks for the durable host's other resume: running again with the halted transcript.

Upstream §10 gives a durable host that omits ``waitFor`` one way back: take the pending
RunResult, deliver the Request out of band, and "resume by calling ``run`` again later". Every
port has it (only golang has the answer-carrying ``runWithAnswer``), so it is the resume path
most hosts use. What the port owes such a host is plain: the halted transcript goes to the
model as history, exactly as the port wrote it, with the new user turn after it; no tool runs
until the model asks for one; and the halted tool, called again, completes or suspends again
like any call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check


def _second_run(record: RunRecord, facts: Facts) -> tuple[dict[str, Any], list[Any], PhaseRecord]:
    """The rerun block, the halted transcript and the phase that ran again with it."""
    if facts.rerun is None:
        raise NotApplicable("no second run in this scenario")
    halted = record.first.result or {}
    if halted.get("status") != "pending" or not isinstance(halted.get("messages"), list):
        raise NotApplicable("the first run did not halt, so there was nothing to run again")
    phase = record.rerun
    if phase is None:
        raise NotApplicable("the second run did not happen")
    return facts.rerun, halted["messages"], phase


@check("resume.rerun-with-transcript")
def rerun_with_transcript(record: RunRecord, facts: Facts) -> Iterator[str]:
    rerun, transcript, phase = _second_run(record, facts)
    how = "with the halted transcript as history" if phase.entry == "run" else "on the conversation holding the halted transcript"
    if phase.error is not None:
        yield f"{phase.entry} {how} failed: {phase.error.get('kind')}: {phase.error.get('message')}"
        return
    halted_ids = {c.id for c in facts.halting_turn or ()}
    early = [e.get("callId") for e in phase.executions if e.get("callId") in halted_ids]
    if early:
        yield f"{phase.entry} {how} executed the halted turn's call(s) {early} again on its own; only the model calls a tool"
    if not phase.requests:
        yield f"{phase.entry} {how} made no provider request"
        return
    sent = phase.requests[0].get("messages")
    if not isinstance(sent, list):
        yield "the second run's first request carries no messages list"
        return
    replayed = sent[: len(transcript)]
    if replayed != transcript:
        at = next((i for i, (a, b) in enumerate(zip(replayed, transcript, strict=False)) if a != b), len(replayed))
        got = replayed[at] if at < len(replayed) else "nothing"
        yield (f"the second run's first request does not replay the halted transcript verbatim: message {at} is "
               f"{got!r}, the transcript has {transcript[at]!r}")
    user_turn = {"role": "user", "content": rerun["prompt"]}
    if sent[len(transcript):] != [user_turn]:
        yield f"after the halted transcript the second run sent {sent[len(transcript):]!r}; expected the one user turn {user_turn!r}"
    wanted = facts.expect.get("resumedStatus")
    status = (phase.result or {}).get("status")
    if wanted is not None and status != wanted:
        yield f"the second run ended {status!r}; the halted tool, called again, should leave it {wanted!r}"
