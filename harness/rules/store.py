"""Checks for the conversation store as a durable host sees it (SPEC.md store.*)."""

from __future__ import annotations

from collections.abc import Iterator

from ..runner import RunRecord
from . import NotApplicable, check
from .transcript import last_tool_turn


@check("store.ask-saves-halt")
def ask_saves_halt(record: RunRecord) -> Iterator[str]:
    phase = record.first
    if phase.entry != "ask" and not phase.params.get("id"):
        raise NotApplicable("stateless entry point")
    if (phase.result or {}).get("status") != "pending":
        raise NotApplicable("the run did not halt")
    if not phase.host.saves:
        yield "nothing was saved to the store after a pending halt"
    elif phase.host.saves[-1]["messages"] != phase.result.get("messages"):
        yield "the stored transcript differs from the RunResult's messages"


@check("store.ask-with-answer-saves")
def ask_with_answer_saves(record: RunRecord) -> Iterator[str]:
    phase = record.resumed
    if phase is None or phase.entry != "askWithAnswer":
        raise NotApplicable("no askWithAnswer phase")
    if phase.error is not None:
        raise NotApplicable("the resume was refused")
    conversation = phase.params.get("id")
    if conversation not in phase.host.gets:
        yield f"askWithAnswer never loaded conversation {conversation!r} from the store"
    if not phase.host.saves:
        yield "askWithAnswer saved nothing after resuming"
    elif phase.host.saves[-1]["messages"] != (phase.result or {}).get("messages"):
        yield "the stored transcript after askWithAnswer differs from its RunResult's messages"


@check("store.verbatim-round-trip")
def verbatim_round_trip(record: RunRecord) -> Iterator[str]:
    phase = record.resumed
    if phase is None or phase.entry != "askWithAnswer" or not phase.requests:
        raise NotApplicable("no stored transcript was replayed to the provider")
    stored = record.first.host.saves[-1]["messages"] if record.first.host.saves else None
    if stored is None:
        yield "nothing was stored to replay"
        return
    turn = last_tool_turn(stored, record.variant.style)
    if turn is None:
        raise NotApplicable("the stored transcript has no tool turn")
    replayed = phase.requests[0].get("messages") or []
    prefix = stored[: turn.index + 1]
    if record.variant.style == "openai":
        # The OpenAI system prompt is part of the transcript; nothing is re-added on resume.
        pass
    if replayed[: len(prefix)] != prefix:
        yield "the resumed request does not replay the stored transcript verbatim up to the halted turn"
